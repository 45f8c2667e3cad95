export { type AuditReport, auditExport, auditExportText, type ComplianceExportDocument } from './audit-export.ts';
export { historyGrew } from './history-grew.ts';
export { firstRepeatedMember } from './repeated-member.ts';
export { retiredAtMs, retirementGraceMs } from './retired-key.ts';
export {
  type JsonWebKeySet,
  keyOwnsGtin,
  keysBoundToGtin,
  type OfflineVerification,
  type OwnerWithoutKeys,
  type PublishedKey,
  verifyOffline,
} from './verify-offline.ts';
