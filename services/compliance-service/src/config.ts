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
});
export type ComplianceServiceConfig = Static<typeof ComplianceServiceConfig>;
