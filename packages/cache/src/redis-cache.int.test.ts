import { randomUUID } from 'node:crypto';
import { describeCacheContract } from './cache.contract.ts';
import { createRedisCache } from './redis-cache.ts';

describeCacheContract('Redis', async () =>
  createRedisCache({
    url: process.env.HALLMARK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    keyPrefix: `test:${randomUUID().slice(0, 8)}:`,
  }),
);
