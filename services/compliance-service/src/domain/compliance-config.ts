// An account's compliance config (per environment), as a decider: no I/O, no clock. The patch was
// checked against its schema at the boundary; here is the rule for what a change makes: the patch
// merged over the current config (risk thresholds and retention field by field, the rest replaced
// whole) as the next version. The events live in the account's stream; the shell loads the state
// from the config row (written in the events' transaction) and guards that row by the version the
// decision was made at.

import { defaultRiskRules } from '@hallmark/codes';
import type { ComplianceConfig, ComplianceConfigPatch } from '@hallmark/contracts';

/** What an account has before it changes anything (docs/COMPLIANCE.md). */
export const defaultComplianceConfig: ComplianceConfig = {
  riskThresholds: { ...defaultRiskRules },
  retention: { scanHistoryDays: 400 },
  evidenceRequiredFor: ['authenticated', 'condition_report'],
  defaultExportFormat: 'json',
};

export interface ComplianceConfigState {
  config: ComplianceConfig;
  /** 0 until the first change. */
  version: number;
}

export const initialComplianceConfig: ComplianceConfigState = { config: defaultComplianceConfig, version: 0 };

export type ComplianceConfigCommand = { type: 'UpdateComplianceConfig'; patch: ComplianceConfigPatch };

export type ComplianceConfigEvent = {
  type: 'compliance.config-updated';
  data: { version: number; changes: ComplianceConfigPatch; config: ComplianceConfig };
};

export function merge(config: ComplianceConfig, patch: ComplianceConfigPatch): ComplianceConfig {
  return {
    riskThresholds: { ...config.riskThresholds, ...patch.riskThresholds },
    retention: { ...config.retention, ...patch.retention },
    evidenceRequiredFor: patch.evidenceRequiredFor ?? config.evidenceRequiredFor,
    defaultExportFormat: patch.defaultExportFormat ?? config.defaultExportFormat,
  };
}

/** Every change is a new version, even one that changes no value (it is recorded as asked). */
export function decide(command: ComplianceConfigCommand, state: ComplianceConfigState): ComplianceConfigEvent[] {
  switch (command.type) {
    case 'UpdateComplianceConfig':
      return [
        {
          type: 'compliance.config-updated',
          data: { version: state.version + 1, changes: command.patch, config: merge(state.config, command.patch) },
        },
      ];
    default:
      return command.type satisfies never;
  }
}

/** Applies one event (a new state; the old one is left as it was). An older version changes nothing. */
export function evolve(state: ComplianceConfigState, event: ComplianceConfigEvent): ComplianceConfigState {
  switch (event.type) {
    case 'compliance.config-updated':
      return event.data.version > state.version ? { config: event.data.config, version: event.data.version } : state;
    default:
      return event.type satisfies never;
  }
}
