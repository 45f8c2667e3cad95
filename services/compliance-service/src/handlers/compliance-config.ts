import type { Bus } from '@hallmark/bus';
import { defaultRiskRules } from '@hallmark/codes';
import {
  broadcasts,
  type ComplianceConfig,
  type ComplianceConfigPatch,
  type ComplianceConfigView,
  HallmarkError,
  type Principal,
} from '@hallmark/contracts';
import type { EventStore } from '@hallmark/event-store';
import { accountStream } from '@hallmark/provenance';
import type { SqlDatabase } from '@hallmark/sql';

/** What an account has before it changes anything (docs/COMPLIANCE.md). */
const defaultComplianceConfig: ComplianceConfig = {
  riskThresholds: { ...defaultRiskRules },
  retention: { scanHistoryDays: 400 },
  evidenceRequiredFor: ['authenticated', 'condition_report'],
  defaultExportFormat: 'json',
};

interface ConfigRow {
  config: ComplianceConfig;
  version: number;
  updated_at: Date | string;
}

async function readConfig(db: SqlDatabase, owner: Principal): Promise<ComplianceConfigView> {
  const rows = await db.query<ConfigRow>(
    'SELECT config, version, updated_at FROM compliance_configs WHERE account_id = $1 AND environment = $2',
    [owner.accountId, owner.environment],
  );
  const row = rows[0];
  if (!row) return { config: defaultComplianceConfig, version: 0, updatedAt: null };
  return { config: row.config, version: row.version, updatedAt: new Date(row.updated_at).toISOString() };
}

function merge(config: ComplianceConfig, patch: ComplianceConfigPatch): ComplianceConfig {
  return {
    riskThresholds: { ...config.riskThresholds, ...patch.riskThresholds },
    retention: { ...config.retention, ...patch.retention },
    evidenceRequiredFor: patch.evidenceRequiredFor ?? config.evidenceRequiredFor,
    defaultExportFormat: patch.defaultExportFormat ?? config.defaultExportFormat,
  };
}

export function createComplianceConfigs(deps: { db: SqlDatabase; eventStore: EventStore; bus: Bus; clock: () => Date }) {
  return {
    get: (owner: Principal) => readConfig(deps.db, owner),

    /**
     * Merges the patch (already checked against its schema) and records a `compliance.config-updated`
     * event in the account's stream; the config row is written in the event's transaction, guarded
     * by the version it was read at, so a change is stored with its event or not at all, and a
     * concurrent change is a CONFLICT that stores nothing.
     */
    async update(owner: Principal, patch: ComplianceConfigPatch): Promise<ComplianceConfigView> {
      const current = await readConfig(deps.db, owner);
      const config = merge(current.config, patch);
      const updatedAt = deps.clock();
      const version = current.version + 1;
      await deps.eventStore.append(
        accountStream(owner),
        [{ type: 'compliance.config-updated', data: { version, changes: patch, config } }],
        {
          expectedVersion: 'any',
          readModels: {
            db: deps.db,
            async write(sql) {
              const written = await sql.query(
                `INSERT INTO compliance_configs (account_id, environment, config, version, updated_at) VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (account_id, environment) DO UPDATE SET config = EXCLUDED.config, version = EXCLUDED.version,
                 updated_at = EXCLUDED.updated_at
               WHERE compliance_configs.version = $6
               RETURNING version`,
                [owner.accountId, owner.environment, JSON.stringify(config), version, updatedAt, current.version],
              );
              if (written.length === 0) {
                throw new HallmarkError(
                  'CONFLICT',
                  'The compliance config changed while this request was applied; send it again.',
                );
              }
            },
          },
        },
      );
      await deps.bus.broadcast(broadcasts.complianceConfigChanged, owner);
      return { config, version, updatedAt: updatedAt.toISOString() };
    },
  };
}
