import { MasterKeySetting } from '@hallmark/runtime';
import { type Static, Type } from '@sinclair/typebox';

export const ComplianceServiceConfig = Type.Object({
  // Unseals the signing keys that sign checkpoints.
  HALLMARK_MASTER_KEY: MasterKeySetting,
  HALLMARK_CHECKPOINT_ORIGIN: Type.String({
    pattern: '^[A-Za-z0-9.-]+(/[A-Za-z0-9._-]+)*$',
    default: 'hallmark',
    description: 'prefix of checkpoint origins (<prefix>/assets/<assetId>) and key names, e.g. compliance.brand.com',
  }),
  HALLMARK_PROJECTION_WAIT_MS: Type.Integer({
    minimum: 0,
    maximum: 60_000,
    default: 2_000,
    description:
      'how long a compliance read waits for the Merkle projection to hold every event already stored before it answers 503 with Retry-After',
  }),
});
export type ComplianceServiceConfig = Static<typeof ComplianceServiceConfig>;
