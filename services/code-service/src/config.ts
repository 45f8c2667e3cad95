import { type Static, Type } from '@sinclair/typebox';

export const CodeServiceConfig = Type.Object({
  HALLMARK_MASTER_KEY: Type.String({
    pattern: '^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$',
    description: '32 bytes as 64 hex characters or base64; seals the signing keys at rest',
  }),
});
export type CodeServiceConfig = Static<typeof CodeServiceConfig>;
