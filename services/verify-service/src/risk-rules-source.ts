import type { Bus } from '@hallmark/bus';
import { defaultRiskRules, type RiskRules } from '@hallmark/codes';
import { broadcasts, getComplianceConfigRpc, type Principal, type RpcResponse, rpcSubject } from '@hallmark/contracts';
import type { Logger } from '@hallmark/runtime';

export interface ScanRules {
  rules: RiskRules;
  /** How long scan history is kept after an item's last scan. */
  retentionMs: number;
}

const defaults: ScanRules = { rules: defaultRiskRules, retentionMs: 400 * 86_400_000 };

/**
 * The risk thresholds and retention of a code owner's compliance config (GET/PATCH
 * /compliance/config), asked of compliance-service and kept for `cacheMs`; a change is broadcast
 * and drops the copy at once. When compliance-service cannot answer, the last known rules (or the
 * defaults) apply, so verification keeps answering.
 */
export function createRiskRulesSource(bus: Bus, log: Logger, options: { timeoutMs: number; cacheMs?: number }) {
  const cacheMs = options.cacheMs ?? 60_000;
  const cache = new Map<string, { value: ScanRules; until: number }>();
  const keyOf = (owner: Principal) => `${owner.accountId}/${owner.environment}`;

  return {
    async start() {
      return bus.onBroadcast(broadcasts.complianceConfigChanged, (payload) => {
        cache.delete(keyOf(payload as Principal));
      });
    },

    async rulesFor(owner: Principal, requestId: string): Promise<ScanRules> {
      const key = keyOf(owner);
      const cached = cache.get(key);
      if (cached && cached.until > Date.now()) return cached.value;
      const answer = await bus.request<RpcResponse<typeof getComplianceConfigRpc>>(
        rpcSubject(getComplianceConfigRpc),
        { principal: owner },
        { timeoutMs: options.timeoutMs, requestId },
      );
      if (!answer.ok) {
        log.warn({ requestId, code: answer.error.code }, 'compliance config unavailable; using the last known risk rules');
        return cached?.value ?? defaults;
      }
      const { riskThresholds, retention } = answer.value.config;
      const value = { rules: riskThresholds, retentionMs: retention.scanHistoryDays * 86_400_000 };
      if (cache.size > 100_000) cache.clear();
      cache.set(key, { value, until: Date.now() + cacheMs });
      return value;
    },
  };
}
export type RiskRulesSource = ReturnType<typeof createRiskRulesSource>;
