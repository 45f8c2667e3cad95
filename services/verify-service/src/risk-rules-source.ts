import { defaultRiskRules, type RiskRules } from '@hallmark/codes';
import type { ComplianceConfigCache } from '@hallmark/compliance-client';
import type { Principal } from '@hallmark/contracts';
import type { Logger } from '@hallmark/runtime';

export interface ScanRules {
  rules: RiskRules;
  /** How long scan history is kept after an item's last scan. */
  retentionMs: number;
}

const defaults: ScanRules = { rules: defaultRiskRules, retentionMs: 400 * 86_400_000 };

/**
 * The risk thresholds and retention of a code owner's compliance config. When compliance-service
 * cannot answer and no copy is cached, the defaults apply: verification keeps answering.
 */
export function createRiskRulesSource(configs: ComplianceConfigCache, log: Logger) {
  return {
    async rulesFor(owner: Principal, requestId: string): Promise<ScanRules> {
      try {
        const { riskThresholds, retention } = await configs.configFor(owner, requestId);
        return { rules: riskThresholds, retentionMs: retention.scanHistoryDays * 86_400_000 };
      } catch (error) {
        log.warn({ requestId, err: error }, 'compliance config unavailable; using the default risk rules');
        return defaults;
      }
    },
  };
}
export type RiskRulesSource = ReturnType<typeof createRiskRulesSource>;
