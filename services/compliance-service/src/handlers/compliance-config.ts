import type { Bus } from '@hallmark/bus';
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
import { decide, defaultComplianceConfig } from '../domain/compliance-config.ts';

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

export function createComplianceConfigs(deps: { db: SqlDatabase; eventStore: EventStore; bus: Bus; clock: () => Date }) {
  return {
    get: (owner: Principal) => readConfig(deps.db, owner),

    /**
     * Load, decide, append, answer: the patch (already checked against its schema) is decided by
     * domain/compliance-config.ts into a `compliance.config-updated` event in the account's stream;
     * the config row is written in the event's transaction, guarded by the version it was read at,
     * so a change is stored with its event or not at all, and a concurrent change is a CONFLICT that
     * stores nothing.
     */
    async update(owner: Principal, patch: ComplianceConfigPatch): Promise<ComplianceConfigView> {
      const current = await readConfig(deps.db, owner);
      const events = decide({ type: 'UpdateComplianceConfig', patch }, current);
      const last = events.at(-1);
      if (!last) throw new Error('a compliance config change decided no event');
      const { config, version } = last.data;
      const updatedAt = deps.clock();
      await deps.eventStore.append(
        accountStream(owner),
        events.map((event) => ({ type: event.type, data: event.data })),
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
