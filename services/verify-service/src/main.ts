import { runService } from '@hallmark/runtime';
import { verifyService } from './service.ts';

await runService(verifyService);
