/**
 * `@hallmark/sdk/offline`: checks that need no server, for anyone holding the API's public key set
 * (`hallmark.keys.jwks()`): a code's signature and a compliance export. Node only (they use
 * node:crypto through @hallmark/client), so they live beside the main entry, which needs only fetch.
 */
export {
  type AuditReport,
  auditExport,
  auditExportText,
  type ComplianceExportDocument,
  historyGrew,
  type JsonWebKeySet,
  type OfflineVerification,
  type PublishedKey,
  verifyOffline,
} from '@hallmark/client';
