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
   * broadcast and drops the copy at once. When compliance-service cannot answer, the last copy
   * is used if there is one; without one the error is thrown (callers decide to fail or fall back).
   */
  configFor(owner: Principal, requestId?: string): Promise<ComplianceConfig>;
}

/** How other services read an account's compliance config (GET/PATCH /compliance/config). */
export function createComplianceConfigCache(
  bus: Bus,
  options: { timeoutMs: number; cacheMs?: number; onStale?: (error: HallmarkError) => void },
): ComplianceConfigCache {
  const cacheMs = options.cacheMs ?? 60_000;
  const cache = new Map<string, { config: ComplianceConfig; until: number }>();
  const keyOf = (owner: Principal) => `${owner.accountId}/${owner.environment}`;

  return {
    start: () =>
      bus.onBroadcast(broadcasts.complianceConfigChanged, (payload) => {
        cache.delete(keyOf(payload as Principal));
      }),

    async configFor(owner, requestId) {
      const key = keyOf(owner);
      const cached = cache.get(key);
      if (cached && cached.until > Date.now()) return cached.config;
      const answer = await bus.request<RpcResponse<typeof getComplianceConfigRpc>>(
        rpcSubject(getComplianceConfigRpc),
        { principal: owner },
        { timeoutMs: options.timeoutMs, ...(requestId ? { requestId } : {}) },
      );
      if (!answer.ok) {
        const error = HallmarkError.fromData(answer.error);
        if (!cached) throw error;
        options.onStale?.(error);
        return cached.config;
      }
      if (cache.size > 100_000) cache.clear();
      cache.set(key, { config: answer.value.config, until: Date.now() + cacheMs });
      return answer.value.config;
    },
  };
}
