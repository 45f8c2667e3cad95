export { complianceService } from './service.ts';
