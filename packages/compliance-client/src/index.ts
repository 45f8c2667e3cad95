export { type ComplianceConfigCache, type ConfigEpochs, createComplianceConfigCache } from './compliance-config-cache.ts';
