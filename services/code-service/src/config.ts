import { type Static, Type } from '@sinclair/typebox';

export const CodeServiceConfig = Type.Object({
  HALLMARK_MASTER_KEY: Type.String({
    pattern: '^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$',
    description: '32 bytes as 64 hex characters or base64; seals the signing keys at rest',
  }),
  HALLMARK_RESOLVER_URL: Type.String({
    pattern: '^https?://[^/?#]+$',
    default: 'http://localhost:8080',
    description: 'scheme and host of the resolver in generated links, without a path (e.g. https://id.brand.com)',
  }),
  HALLMARK_LINK_ORDER: Type.Union([Type.Literal('spec'), Type.Literal('gs1')], {
    default: 'spec',
    description: 'spec (/21/ before /10/) or gs1 (/10/ before /21/, as GS1 parsers require)',
  }),
});
export type CodeServiceConfig = Static<typeof CodeServiceConfig>;
