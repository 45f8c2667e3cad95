import { MasterKeySetting, ResolverUrlSetting } from '@hallmark/runtime';
import { type Static, Type } from '@sinclair/typebox';

export const CodeServiceConfig = Type.Object({
  HALLMARK_MASTER_KEY: MasterKeySetting,
  HALLMARK_RESOLVER_URL: ResolverUrlSetting,
  HALLMARK_LINK_ORDER: Type.Union([Type.Literal('spec'), Type.Literal('gs1')], {
    default: 'spec',
    description: 'spec (/21/ before /10/) or gs1 (/10/ before /21/, as GS1 parsers require)',
  }),
  HALLMARK_SELF_SERVICE_TEST_CLAIMS: Type.Boolean({
    default: false,
    description: 'let accounts claim GTINs and company prefixes themselves (POST /gtins), in the test environment only',
  }),
});
export type CodeServiceConfig = Static<typeof CodeServiceConfig>;
