import { describeCacheContract } from './cache.contract.ts';
import { createMemoryCache } from './memory-cache.ts';

describeCacheContract('memory', async () => createMemoryCache());
