import { resolve } from 'node:path';
import { auctionService } from '@hallmark/auction-service';
import { codeService } from '@hallmark/code-service';
import { complianceService } from '@hallmark/compliance-service';
import { GatewayConfig, gatewayService } from '@hallmark/gateway';
import {
  createEmbedded,
  createLogger,
  EmbeddedConfig,
  instanceName,
  type Logger,
  type RunningService,
  readConfig,
  type ServiceDefinition,
} from '@hallmark/runtime';
import type { SqlDatabase } from '@hallmark/sql';
import { verifyService } from '@hallmark/verify-service';
import type pino from 'pino';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.ts';
import { loadOrCreateMasterKey } from './master-key-file.ts';
import { ensureOperatorKeyFile } from './operator-key-file.ts';
import { preparePrivateDataDir } from './private-files.ts';

/** The services behind the gateway, in the order the embedded form starts them. */
export const backendServices: readonly ServiceDefinition[] = [codeService, verifyService, auctionService, complianceService];

/** The gateway last: it starts taking requests only once every service can answer them. */
const services: readonly ServiceDefinition[] = [...backendServices, gatewayService];

export interface EmbeddedOptions {
  /** Where log lines go (standard output by default); tests read them. */
  logDestination?: pino.DestinationStream;
  /** The time now; tests move it to reach expiry. */
  clock?: () => Date;
}

export interface EmbeddedProduct {
  url: string;
  log: Logger;
  /**
   * The operator key made at this start, when there was none (or put in place, when the start that
   * made it was killed before it could). Only its hash is in the database; the secret is in
   * `operatorKeyFile` (mode 0600) and here, for callers in this process (tests).
   */
  generatedOperatorKey: string | undefined;
  /** `<data dir>/operator-key`, when this start made the operator key or put it in place. */
  operatorKeyFile: string | undefined;
  /** The product's database (PGlite), for tests that inspect or alter what is stored. */
  db: SqlDatabase;
  stop(): Promise<void>;
}

/**
 * The embedded form: all five services in this process, PGlite under HALLMARK_DATA_DIR, the
 * in-process bus and the memory cache (written behind into PGlite). Needs nothing installed but Node.
 * Holds the data folder (`<data dir>/hallmark.lock`, with this pid and, once listening, the URL)
 * until stopped; rejects with DataDirInUseError when another live process holds it.
 */
export async function startEmbedded(
  env: NodeJS.ProcessEnv = process.env,
  options: EmbeddedOptions = {},
): Promise<EmbeddedProduct> {
  const base = readConfig(EmbeddedConfig, env);
  const dataDir = resolve(base.HALLMARK_DATA_DIR);
  await preparePrivateDataDir(dataDir);
  const lock = await acquireDataDirLock(dataDir, 'server');
  try {
    return await startHoldingLock(env, options, base, dataDir, lock);
  } catch (error) {
    await lock.release();
    throw error;
  }
}

async function startHoldingLock(
  env: NodeJS.ProcessEnv,
  options: EmbeddedOptions,
  base: EmbeddedConfig,
  dataDir: string,
  lock: DataDirLock,
): Promise<EmbeddedProduct> {
  const port = env.PORT || '8080';
  const serviceEnv = {
    ...env,
    // One process for one user: reachable from this machine only unless HALLMARK_HOST says otherwise.
    HALLMARK_HOST: env.HALLMARK_HOST || '127.0.0.1',
    HALLMARK_MASTER_KEY: env.HALLMARK_MASTER_KEY || (await loadOrCreateMasterKey(dataDir)),
    // Links point at this process unless told otherwise (docs/INTERFACE.md: http://localhost:$PORT).
    HALLMARK_RESOLVER_URL: env.HALLMARK_RESOLVER_URL || `http://localhost:${port === '0' ? '8080' : port}`,
  };
  // The gateway's public URL: HALLMARK_PUBLIC_URL, else the resolver URL given, else the port it is bound to (PORT=0 too).
  const gatewayEnv = { ...serviceEnv, HALLMARK_RESOLVER_URL: env.HALLMARK_RESOLVER_URL };
  const configs = new Map(
    services.map((definition) => [
      definition.name,
      readConfig(definition.configSchema, definition === gatewayService ? gatewayEnv : serviceEnv),
    ]),
  );
  const gatewayConfig = readConfig(GatewayConfig, gatewayEnv);
  const clock = options.clock ?? (() => new Date());
  const instance = instanceName();
  const log = createLogger({
    instance,
    level: base.HALLMARK_LOG_LEVEL,
    ...(options.logDestination ? { destination: options.logDestination } : {}),
  });
  const infra = await createEmbedded(base, log, clock);
  const running: RunningService[] = [];
  const startService = async (definition: ServiceDefinition) =>
    running.push(
      await definition.start({
        name: definition.name,
        instance,
        config: configs.get(definition.name) as never,
        base,
        log: log.child({ service: definition.name }),
        infra,
        clock,
      }),
    );
  for (const definition of backendServices) await startService(definition);
  // The operator key is on disk before the gateway listens: a script that waits for /health and then
  // reads <data dir>/operator-key finds it (the backends have migrated the accounts tables by now).
  const operatorKey = gatewayConfig.HALLMARK_BOOTSTRAP_KEY
    ? undefined
    : await ensureOperatorKeyFile(dataDir, { db: infra.db, eventStore: infra.eventStore }, clock());
  await startService(gatewayService);
  const generatedOperatorKey = operatorKey?.secret;
  const operatorKeyFile = operatorKey?.path;
  const url = new URL(running.at(-1)?.address ?? `http://localhost:${gatewayConfig.PORT}`);
  url.hostname = 'localhost';
  // The hallmark command finds the server here and talks to it over the API instead of the files.
  await lock.setUrl(url.origin);
  return {
    url: url.origin,
    log,
    generatedOperatorKey,
    operatorKeyFile,
    db: infra.db,
    async stop() {
      for (const service of running.reverse()) await service.stop();
      await infra.close();
      await lock.release();
      log.flush();
    },
  };
}
