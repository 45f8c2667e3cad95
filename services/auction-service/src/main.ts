import { runService } from '@hallmark/runtime';
import { auctionService } from './service.ts';

await runService(auctionService);
