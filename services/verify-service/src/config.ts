import { type Static, Type } from '@sinclair/typebox';

export const VerifyServiceConfig = Type.Object({
  HALLMARK_MAX_ACTIVE_BLOCKS: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 10_000,
    description:
      'blocklist entries an account may have active per environment (each replica holds every active one in memory); a serial range counts as one',
  }),
});
export type VerifyServiceConfig = Static<typeof VerifyServiceConfig>;
