export { CodeServiceConfig } from './config.ts';
export { codeService } from './service.ts';
export { listOwnershipConflicts, migrateCodes, type OwnershipConflict } from './store/code-store.ts';
