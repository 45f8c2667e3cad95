import { MasterKeySetting, ResolverUrlSetting } from '@hallmark/runtime';
import { type Static, Type } from '@sinclair/typebox';

export const AuctionServiceConfig = Type.Object({
  // Also keys the transfer-code HMACs (HKDF), besides unsealing the keys that sign object links.
  HALLMARK_MASTER_KEY: MasterKeySetting,
  HALLMARK_RESOLVER_URL: ResolverUrlSetting,
  HALLMARK_PHOTO_BYTES_PER_ACCOUNT: Type.Integer({
    minimum: 1_024,
    default: 10 * 1024 * 1024 * 1024,
    description:
      'bytes of photos an account may store in each environment, every photo bound counted (replaced ones too); beyond, 413',
  }),
});
export type AuctionServiceConfig = Static<typeof AuctionServiceConfig>;
