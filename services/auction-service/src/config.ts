import { MasterKeySetting, ResolverUrlSetting } from '@hallmark/runtime';
import { type Static, Type } from '@sinclair/typebox';

export const AuctionServiceConfig = Type.Object({
  // Also keys the transfer-code HMACs (HKDF), besides unsealing the keys that sign object links.
  HALLMARK_MASTER_KEY: MasterKeySetting,
  HALLMARK_RESOLVER_URL: ResolverUrlSetting,
});
export type AuctionServiceConfig = Static<typeof AuctionServiceConfig>;
