export { type AuditReport, auditExport, type ComplianceExportDocument } from './audit-export.ts';
export {
  type JsonWebKeySet,
  keyOwnsGtin,
  keysBoundToGtin,
  type OfflineVerification,
  type OwnerWithoutKeys,
  type PublishedKey,
  verifyOffline,
} from './verify-offline.ts';
