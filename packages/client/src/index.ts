export { type AuditReport, auditExport, type ComplianceExportDocument } from './audit-export.ts';
export { type JsonWebKeySet, type OfflineVerification, verifyOffline } from './verify-offline.ts';
