import { runService } from '@hallmark/runtime';
import { complianceService } from './service.ts';

await runService(complianceService);
