import { runService } from '@hallmark/runtime';
import { codeService } from './service.ts';

await runService(codeService);
