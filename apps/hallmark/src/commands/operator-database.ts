import { join, resolve } from 'node:path';
import { migrateAccounts } from '@hallmark/accounts';
import { type Bus, createNatsBus } from '@hallmark/bus';
import { createPgliteDatabase, createPostgresDatabase, type SqlDatabase } from '@hallmark/sql';

export interface OperatorConnection {
  db: SqlDatabase;
  /** Set when HALLMARK_NATS_URL is: revocations are then broadcast to running gateways. */
  bus: Bus | undefined;
  close(): Promise<void>;
}

/**
 * The database the operator commands work on: HALLMARK_DATABASE_URL when set (the distributed
 * form), else the embedded form's PGlite under HALLMARK_DATA_DIR, which only one process may
 * open at a time: stop `hallmark start` first.
 */
export async function connectOperatorDatabase(env: NodeJS.ProcessEnv): Promise<OperatorConnection> {
  const db = env.HALLMARK_DATABASE_URL
    ? createPostgresDatabase({ connectionString: env.HALLMARK_DATABASE_URL, applicationName: 'hallmark-cli', maxConnections: 2 })
    : await createPgliteDatabase(join(resolve(env.HALLMARK_DATA_DIR || './.hallmark'), 'pglite'));
  await migrateAccounts(db);
  const bus = env.HALLMARK_NATS_URL
    ? await createNatsBus({
        servers: env.HALLMARK_NATS_URL,
        ...(env.HALLMARK_TLS_CA_FILE ? { tlsCaFile: env.HALLMARK_TLS_CA_FILE } : {}),
        name: 'hallmark-cli',
        prefix: env.HALLMARK_NAMESPACE || 'hallmark',
      })
    : undefined;
  return {
    db,
    bus,
    async close() {
      await bus?.drain();
      await db.close();
    },
  };
}
