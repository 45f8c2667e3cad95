export type { Cache, CounterState, QuotaCounter, QuotaDecision, ScanInput, ScanRecord } from './cache.ts';
export { createMemoryCache } from './memory-cache.ts';
export { createRedisCache, type RedisCacheOptions } from './redis-cache.ts';
