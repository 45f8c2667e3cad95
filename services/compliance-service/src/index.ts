export { merkleProjectionName } from './merkle-projection.ts';
export { type LogDifference, type RebuildOutcome, rebuildMerkleProjection } from './merkle-rebuild.ts';
export { complianceService } from './service.ts';
export { migrateCompliance } from './store/merkle-store.ts';
