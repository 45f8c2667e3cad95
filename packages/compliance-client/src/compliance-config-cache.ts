import type { Bus, Subscription } from '@hallmark/bus';
import {
  broadcasts,
  type ComplianceConfig,
  getComplianceConfigRpc,
  HallmarkError,
  type Principal,
  type RpcResponse,
  rpcSubject,
} from '@hallmark/contracts';

export interface ComplianceConfigCache {
  /** Listens for config changes; call once at start, stop with the service. */
  start(): Promise<Subscription>;
  /**
   * The owner's config, from compliance-service and kept for `cacheMs`; a change anywhere is
   * broadcast and drops the copy at once, and moves the `compliance_configs` epoch, which drops it
   * within a poll when the broadcast is lost. When compliance-service cannot answer, the last copy
   * is used if there is one; without one the error is thrown (callers decide to fail or fall back).
   */
  configFor(owner: Principal, requestId?: string): Promise<ComplianceConfig>;
}

/**
 * The `compliance_configs` cache epoch (`CacheEpochs` of @hallmark/accounts): every config change
 * moves it in its own transaction, so a copy read under an older one is stale whether or not the
 * change's broadcast came.
 */
export interface ConfigEpochs {
  current(table: 'compliance_configs'): number;
}

/** How other services read an account's compliance config (GET/PATCH /compliance/config). */
export function createComplianceConfigCache(
  bus: Bus,
  options: { timeoutMs: number; cacheMs?: number; epochs?: ConfigEpochs; onStale?: (error: HallmarkError) => void },
): ComplianceConfigCache {
  const cacheMs = options.cacheMs ?? 60_000;
  const epochOf = () => options.epochs?.current('compliance_configs') ?? 0;
  const cache = new Map<string, { config: ComplianceConfig; until: number; epoch: number }>();
  const keyOf = (owner: Principal) => `${owner.accountId}/${owner.environment}`;
  // Bumped by every change broadcast: a load that began before a change may answer the config as it
  // was, after the broadcast; it is then asked again, and kept only when no change came meanwhile.
  // (Kept as it was, it served the earlier config for up to cacheMs after the change had answered.)
  let changes = 0;
  const load = (owner: Principal, requestId: string | undefined) =>
    bus.request<RpcResponse<typeof getComplianceConfigRpc>>(
      rpcSubject(getComplianceConfigRpc),
      { principal: owner },
      { timeoutMs: options.timeoutMs, ...(requestId ? { requestId } : {}) },
    );

  return {
    start: () =>
      bus.onBroadcast(broadcasts.complianceConfigChanged, (payload) => {
        changes += 1;
        cache.delete(keyOf(payload as Principal));
      }),

    async configFor(owner, requestId) {
      const key = keyOf(owner);
      const cached = cache.get(key);
      if (cached && cached.until > Date.now() && cached.epoch >= epochOf()) return cached.config;
      for (let attempt = 1; ; attempt += 1) {
        const changesAtStart = changes;
        const epoch = epochOf();
        const answer = await load(owner, requestId);
        if (!answer.ok) {
          const error = HallmarkError.fromData(answer.error);
          if (!cached) throw error;
          options.onStale?.(error);
          return cached.config;
        }
        if (changes === changesAtStart) {
          if (cache.size > 100_000) cache.clear();
          cache.set(key, { config: answer.value.config, until: Date.now() + cacheMs, epoch });
          return answer.value.config;
        }
        // Changes keep coming: answer the newest read, keeping none.
        if (attempt >= 3) return answer.value.config;
      }
    },
  };
}
