import { type Static, Type } from '@sinclair/typebox';

export const AuctionServiceConfig = Type.Object({
  HALLMARK_MASTER_KEY: Type.String({
    pattern: '^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$',
    description: '32 bytes as 64 hex characters or base64; unseals the keys that sign object links, keys transfer-code hashes',
  }),
  HALLMARK_RESOLVER_URL: Type.String({
    pattern: '^https?://[^/?#]+$',
    default: 'http://localhost:8080',
    description: 'scheme and host of the resolver in object links, without a path',
  }),
});
export type AuctionServiceConfig = Static<typeof AuctionServiceConfig>;
