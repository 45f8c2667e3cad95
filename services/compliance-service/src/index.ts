export { merkleProjectionName, rebuildMerkleProjection } from './merkle-projection.ts';
export { complianceService } from './service.ts';
export { migrateCompliance } from './store/merkle-store.ts';
