export { type ComplianceConfigCache, createComplianceConfigCache } from './compliance-config-cache.ts';
