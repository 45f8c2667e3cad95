export type { Cache, CounterState, QuotaCounter, QuotaDecision, QuotaRefund, ScanInput, ScanRecord } from './cache.ts';
export { createJournaledCache, type JournaledCache, type JournaledCacheOptions } from './journaled-cache.ts';
export {
  type CacheStateKind,
  type CacheStateRecord,
  createMemoryCache,
  type MemoryCache,
  type MemoryCacheOptions,
} from './memory-cache.ts';
export { createRedisCache, type RedisCacheOptions } from './redis-cache.ts';
