export { CodeServiceConfig } from './config.ts';
export { recordGtinClaim, recordGtinRevocation } from './gtin-claim-log.ts';
export { codeService } from './service.ts';
export { listOwnershipConflicts, migrateCodes, type OwnershipConflict } from './store/code-store.ts';
