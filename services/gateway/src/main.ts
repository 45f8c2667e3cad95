import { runService } from '@hallmark/runtime';
import { gatewayService } from './service.ts';

await runService(gatewayService);
