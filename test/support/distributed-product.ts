import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteNamespaceStreams } from '@hallmark/bus';
import { createTestDatabase } from '@hallmark/sql';
import { type ServiceProcess, startServiceProcess } from './service-process.ts';
import { waitFor } from './wait.ts';

/** A running product as a test drives it over HTTP, whichever form it has. */
export interface RunningProduct {
  form: 'embedded' | 'distributed';
  url: string;
  operatorKey: string;
  /** Every gateway replica's URL, `url` first (the distributed form; options.gateways). */
  gatewayUrls?: string[];
  /** The product's PostgreSQL database (the distributed form), for tests that inspect or alter what is stored. */
  databaseUrl?: string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || !address) throw new Error('no port');
  return address.port;
}

/** The distributed form, with its processes by name (`gateway-1`, `code-service-1`, …) to kill and restart. */
export interface DistributedProduct extends RunningProduct {
  form: 'distributed';
  gatewayUrls: string[];
  databaseUrl: string;
  /** Prefix of NATS subjects, the JetStream stream and Redis keys (HALLMARK_NAMESPACE). */
  namespace: string;
  /** The NATS server the processes use. */
  natsUrl: string;
  processNames(): string[];
  /** The process running under that name now (a restart replaces it). */
  process(name: string): ServiceProcess;
  /** Sends the signal (default SIGKILL: kill -9) and waits for the exit. */
  kill(name: string, signal?: NodeJS.Signals): Promise<number | null>;
  /** Kills the process if it still runs and starts a new one under the same name and settings. */
  restart(name: string): Promise<ServiceProcess>;
}

/**
 * The distributed form for a test: one OS process per service (one replica each) on this
 * machine's NATS, PostgreSQL and Redis, with a database, a NATS namespace and a blob folder of its
 * own, removed again by `stop`.
 */
export async function startDistributedProduct(
  extraEnv: Record<string, string> = {},
  options: {
    replicas?: Partial<Record<'code-service' | 'verify-service' | 'auction-service' | 'compliance-service', number>>;
    /** Gateway replicas, each on a port of its own (1, or as many as gatewayEnv names). */
    gateways?: number;
    /**
     * Settings of each gateway replica beyond extraEnv, by index (`gateway-1` first): one back end
     * behind gateways configured differently (rate limits, proxies, HTTP timeouts).
     */
    gatewayEnv?: Array<Record<string, string>>;
  } = {},
): Promise<DistributedProduct> {
  // A NATS server of the caller's own (the fault suite restarts it) comes in extraEnv.
  const natsUrl = extraEnv.HALLMARK_NATS_URL ?? process.env.HALLMARK_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
  const namespace = `e2e_${randomUUID().slice(0, 8)}`;
  const database = await createTestDatabase('e2e');
  const blobDir = await mkdtemp(join(tmpdir(), 'hallmark-e2e-blobs-'));
  const ports = [await freePort()];
  while (ports.length < Math.max(options.gateways ?? 1, options.gatewayEnv?.length ?? 0)) ports.push(await freePort());
  const operatorKey = `svc_live_${randomUUID().replaceAll('-', '')}${randomUUID().replaceAll('-', '')}`;
  const env = {
    HALLMARK_NATS_URL: natsUrl,
    HALLMARK_DATABASE_URL: database.url,
    HALLMARK_REDIS_URL: process.env.HALLMARK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    HALLMARK_NAMESPACE: namespace,
    HALLMARK_LOG_LEVEL: 'warn',
    HALLMARK_REQUEST_TIMEOUT_MS: '5000',
    HALLMARK_MASTER_KEY: randomBytes(32).toString('hex'),
    HALLMARK_BOOTSTRAP_KEY: operatorKey,
    HALLMARK_BLOB_DIR: blobDir,
    HALLMARK_BUS_SECRET: randomBytes(32).toString('hex'),
    ...extraEnv,
  };
  // How each process was started, by name, so `restart` can start it again alike.
  const launches = new Map<string, { service: string; env: Record<string, string> }>();
  const launch = (service: string, serviceEnv: Record<string, string>, name: string) => {
    launches.set(name, { service, env: serviceEnv });
    return startServiceProcess(service, serviceEnv, name);
  };
  const processes: ServiceProcess[] = [
    ...ports.map((port, replica) =>
      launch(
        'gateway',
        { ...env, ...options.gatewayEnv?.[replica], PORT: String(port), HALLMARK_HOST: '127.0.0.1' },
        `gateway-${replica + 1}`,
      ),
    ),
    ...(['code-service', 'verify-service', 'auction-service', 'compliance-service'] as const).flatMap((service) =>
      Array.from({ length: options.replicas?.[service] ?? 1 }, (_, replica) => launch(service, env, `${service}-${replica + 1}`)),
    ),
  ];
  const gatewayUrls = ports.map((port) => `http://127.0.0.1:${port}`);
  const url = gatewayUrls[0] as string;
  const stop = async () => {
    await Promise.all(processes.map((started) => started.stop('SIGTERM')));
    await database.drop();
    await deleteNamespaceStreams(natsUrl, namespace);
    await rm(blobDir, { recursive: true, force: true });
  };
  // A process that exits while starting (a bad setting) fails the start at once, not after the wait.
  const exitedEarly = Promise.race(
    processes.map(async (started) => {
      const code = await started.exited;
      throw new Error(`${started.name} exited with ${code} while starting`);
    }),
  );
  exitedEarly.catch(() => {});
  try {
    await Promise.race([exitedEarly, ready()]);
  } catch (error) {
    for (const started of processes) {
      console.error(
        `--- ${started.name} (exit ${started.child.exitCode})\n${started.stderr.join('')}${JSON.stringify(started.lines.slice(-5))}`,
      );
    }
    await stop();
    throw error;
  }
  const indexOf = (name: string) => {
    const found = processes.findIndex((started) => started.name === name);
    if (found < 0) throw new Error(`no process named ${name}: ${processes.map((started) => started.name).join(', ')}`);
    return found;
  };
  return {
    form: 'distributed',
    url,
    operatorKey,
    gatewayUrls,
    databaseUrl: env.HALLMARK_DATABASE_URL,
    stop,
    namespace,
    natsUrl,
    processNames: () => processes.map((started) => started.name),
    process: (name) => processes[indexOf(name)] as ServiceProcess,
    kill: (name, signal = 'SIGKILL') => (processes[indexOf(name)] as ServiceProcess).stop(signal),
    async restart(name) {
      const index = indexOf(name);
      await (processes[index] as ServiceProcess).stop('SIGKILL');
      const { service, env: serviceEnv } = launches.get(name) as { service: string; env: Record<string, string> };
      const started = startServiceProcess(service, serviceEnv, name);
      processes[index] = started;
      return started;
    },
  };

  async function ready() {
    for (const gatewayUrl of gatewayUrls) {
      await waitFor('the gateway to be ready', async () => ((await fetch(`${gatewayUrl}/ready`)).ok ? true : undefined), {
        timeoutMs: 60_000,
      });
    }
    for (const service of ['code-service', 'verify-service', 'auction-service', 'compliance-service']) {
      await waitFor(
        `${service} to answer`,
        async () => ((await fetch(`${url}/api/v1/system/ping/${service}`, { method: 'POST' })).status === 200 ? true : undefined),
        { timeoutMs: 60_000 },
      );
    }
  }
}
