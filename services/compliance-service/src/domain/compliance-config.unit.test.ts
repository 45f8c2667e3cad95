import type { ComplianceConfigPatch } from '@hallmark/contracts';
import { describe, expect, it } from 'vitest';
import {
  type ComplianceConfigEvent,
  decide,
  defaultComplianceConfig,
  evolve,
  initialComplianceConfig,
} from './compliance-config.ts';

const change = (patch: ComplianceConfigPatch) => ({ type: 'UpdateComplianceConfig' as const, patch });
const updated = (version: number, changes: ComplianceConfigPatch, config = defaultComplianceConfig): ComplianceConfigEvent => ({
  type: 'compliance.config-updated',
  data: { version, changes, config },
});

/** given(events).when(command).then(events): the decider alone, no HTTP, no database. */
function given(events: ComplianceConfigEvent[]) {
  const state = events.reduce(evolve, initialComplianceConfig);
  return {
    state,
    when: (command: ReturnType<typeof change>) => ({
      // biome-ignore lint/suspicious/noThenProperty: the given/when/then spec form; this object is never awaited
      then: (expected: ComplianceConfigEvent[]) => expect(decide(command, state)).toEqual(expected),
    }),
  };
}

describe('changing the compliance config', () => {
  it('the first change is version 1, merged over the defaults', () =>
    given([])
      .when(change({ riskThresholds: { maxScansPerWindow: 50 } }))
      .then([
        updated(
          1,
          { riskThresholds: { maxScansPerWindow: 50 } },
          {
            ...defaultComplianceConfig,
            riskThresholds: { ...defaultComplianceConfig.riskThresholds, maxScansPerWindow: 50 },
          },
        ),
      ]));

  it('risk thresholds and retention merge field by field; the others are replaced whole', () => {
    const first = {
      ...defaultComplianceConfig,
      riskThresholds: { ...defaultComplianceConfig.riskThresholds, maxScansPerWindow: 50 },
      evidenceRequiredFor: ['authenticated', 'condition_report', 'appraisal'],
    };
    const patch: ComplianceConfigPatch = {
      riskThresholds: { maxTravelKmh: 1200 },
      retention: { scanHistoryDays: 30 },
      evidenceRequiredFor: ['appraisal'],
      defaultExportFormat: 'json',
    };
    given([updated(1, {}, first)])
      .when(change(patch))
      .then([
        updated(2, patch, {
          riskThresholds: { ...first.riskThresholds, maxTravelKmh: 1200 },
          retention: { scanHistoryDays: 30 },
          evidenceRequiredFor: ['appraisal'],
          defaultExportFormat: 'json',
        }),
      ]);
  });

  it('each change is the next version, even one that changes no value', () =>
    given([updated(1, {}), updated(2, {})])
      .when(change({ defaultExportFormat: 'json' }))
      .then([updated(3, { defaultExportFormat: 'json' })]));

  it('an older version replayed after a newer one changes nothing', () => {
    const newer = { ...defaultComplianceConfig, retention: { scanHistoryDays: 10 } };
    const { state } = given([updated(2, {}, newer), updated(1, {})]);
    expect(state).toEqual({ version: 2, config: newer });
  });
});
