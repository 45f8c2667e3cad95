import { type Static, Type } from '@sinclair/typebox';

export const ComplianceServiceConfig = Type.Object({
  HALLMARK_MASTER_KEY: Type.String({
    pattern: '^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$',
    description: '32 bytes as 64 hex characters or base64; unseals the signing keys that sign checkpoints',
  }),
  HALLMARK_CHECKPOINT_ORIGIN: Type.String({
    pattern: '^[A-Za-z0-9.-]+(/[A-Za-z0-9._-]+)*$',
    default: 'hallmark',
    description: 'prefix of checkpoint origins (<prefix>/assets/<assetId>) and key names, e.g. compliance.brand.com',
  }),
});
export type ComplianceServiceConfig = Static<typeof ComplianceServiceConfig>;
