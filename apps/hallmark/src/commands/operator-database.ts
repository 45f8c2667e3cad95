import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { migrateAccounts } from '@hallmark/accounts';
import { type Bus, createNatsBus, createRequestSigner, parseBusSecret } from '@hallmark/bus';
import { createSqlEventStore, type EventStore, loadKurrentEventStore } from '@hallmark/event-store';
import { ConfigError } from '@hallmark/runtime';
import { createPgliteDatabase, createPostgresDatabase, type SqlDatabase } from '@hallmark/sql';
import { acquireDataDirLock, DataDirInUseError, type DataDirLock } from '../data-dir-lock.ts';
import { CommandError } from './command-error.ts';
import { connectEmbeddedServer, connectProduct, embeddedDataDir, type ProductApi, type ProductOptions } from './product-api.ts';

export interface OperatorConnection {
  db: SqlDatabase;
  /**
   * Where the commands record what they change (accounts, keys, GTIN claims): KurrentDB when
   * HALLMARK_ESDB_URL is set, as in the running services, else the database's own event store.
   */
  eventStore: EventStore;
  /** Set when HALLMARK_NATS_URL and HALLMARK_BUS_SECRET are: revocations are then broadcast to running gateways. */
  bus: Bus | undefined;
  close(): Promise<void>;
}

/** Where an operator command goes: the database itself, or the API of the server that holds it. */
export type OperatorTarget = { kind: 'database'; connection: OperatorConnection } | { kind: 'server'; api: ProductApi };

/**
 * For the commands that have API routes (accounts, keys, gtins grant/list/revoke): the API at
 * --url when given; else the database when nothing holds it (HALLMARK_DATABASE_URL, or the
 * embedded folder with no server running), else the running embedded server's API, through the
 * SDK with --key, HALLMARK_OPERATOR_KEY, HALLMARK_API_KEY or the operator key file.
 * Rejects with CommandError when the server's API cannot be used (no key, still starting).
 */
export async function connectOperator(env: NodeJS.ProcessEnv, options: ProductOptions): Promise<OperatorTarget> {
  if (options.url) return { kind: 'server', api: await connectProduct(options, env, 'operator') };
  try {
    return { kind: 'database', connection: await openOperatorDatabase(env) };
  } catch (error) {
    if (!(error instanceof DataDirInUseError) || error.holder.holder !== 'server') throw inUse(error);
    return { kind: 'server', api: await connectEmbeddedServer(embeddedDataDir(env), error.holder, options, env, 'operator') };
  }
}

/**
 * The database the operator commands work on: HALLMARK_DATABASE_URL when set (the distributed
 * form), else the embedded form's PGlite under HALLMARK_DATA_DIR, which only one process may
 * open at a time: the command holds `<data dir>/hallmark.lock` while it works. For the commands
 * that cannot go through the API (`command` names it in the refusal): rejects with CommandError
 * when a server or another command holds the folder.
 */
export async function connectOperatorDatabase(env: NodeJS.ProcessEnv, command: string): Promise<OperatorConnection> {
  try {
    return await openOperatorDatabase(env);
  } catch (error) {
    if (error instanceof DataDirInUseError && error.holder.holder === 'server') {
      throw new CommandError(
        `${error.message}. "hallmark ${command}" works on the database itself, which only one process may open: ` +
          `stop the server first (Ctrl-C, or kill ${error.holder.pid}), then run it again.`,
      );
    }
    throw inUse(error);
  }
}

const inUse = (error: unknown) => (error instanceof DataDirInUseError ? new CommandError(error.message) : error);

async function openOperatorDatabase(env: NodeJS.ProcessEnv): Promise<OperatorConnection> {
  let lock: DataDirLock | undefined;
  let db: SqlDatabase;
  if (env.HALLMARK_DATABASE_URL) {
    // Read as the services read it (packages/runtime config.ts): anything else is a wrong setting
    // (exit 78), not a host name for the driver to look up.
    if (!/^(postgres|postgresql):\/\//.test(env.HALLMARK_DATABASE_URL)) {
      throw new ConfigError('HALLMARK_DATABASE_URL must be a PostgreSQL connection URL (postgres://… or postgresql://…)');
    }
    db = createPostgresDatabase({
      connectionString: env.HALLMARK_DATABASE_URL,
      ...(env.HALLMARK_TLS_CA_FILE ? { tlsCaFile: env.HALLMARK_TLS_CA_FILE } : {}),
      applicationName: 'hallmark-cli',
      maxConnections: 2,
    });
  } else {
    const dataDir = embeddedDataDir(env);
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    lock = await acquireDataDirLock(dataDir, 'cli');
    try {
      db = await createPgliteDatabase(join(dataDir, 'pglite'));
    } catch (error) {
      await lock.release();
      throw error;
    }
  }
  await migrateAccounts(db);
  const eventStore = env.HALLMARK_ESDB_URL ? await loadKurrentEventStore(env.HALLMARK_ESDB_URL) : await createSqlEventStore(db);
  // Services take only signed broadcasts: without the bus secret there is nothing to send, and
  // the running processes see the change when their caches next look (api keys: within a second).
  const bus =
    env.HALLMARK_NATS_URL && env.HALLMARK_BUS_SECRET
      ? await createNatsBus({
          servers: env.HALLMARK_NATS_URL,
          ...(env.HALLMARK_TLS_CA_FILE ? { tlsCaFile: env.HALLMARK_TLS_CA_FILE } : {}),
          name: 'hallmark-cli',
          prefix: env.HALLMARK_NAMESPACE || 'hallmark',
          signer: createRequestSigner(busSecretOf(env.HALLMARK_BUS_SECRET)),
        })
      : undefined;
  return {
    db,
    eventStore,
    bus,
    async close() {
      await bus?.drain();
      await eventStore.close();
      await db.close();
      await lock?.release();
    },
  };
}

/** HALLMARK_BUS_SECRET as the services read it; a CommandError when it is not 32 bytes. */
function busSecretOf(text: string): Buffer {
  try {
    return parseBusSecret(text);
  } catch (error) {
    throw new CommandError(`HALLMARK_BUS_SECRET: ${(error as Error).message}`);
  }
}
