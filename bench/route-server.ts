// A child process of bench/auth.ts: the embedded form composed as `pnpm start` composes it (the
// four services and the gateway in one process, PGlite, the in-process bus, the memory cache),
// listening on PORT with HALLMARK_BOOTSTRAP_KEY as the operator's key. With
// BENCH_UNCHECKED_KEY=1 the gateway acts as that key on every request without authenticating it,
// checking scopes or spending limits: the same product minus what issue #3 asks to measure.
import { randomBytes } from 'node:crypto';
import { ensureOperator, migrateAccounts } from '@hallmark/accounts';
import { backendServices } from '@hallmark/app';
import { buildGatewayApp, GatewayConfig } from '@hallmark/gateway';
import {
  createEmbedded,
  createLogger,
  EmbeddedConfig,
  instanceName,
  type RunningService,
  readConfig,
  stopOnSignal,
} from '@hallmark/runtime';
import { createAuthenticator } from '../services/gateway/src/auth/authenticator.ts';

const env = { ...process.env, HALLMARK_MASTER_KEY: randomBytes(32).toString('base64') };
const base = readConfig(EmbeddedConfig, env);
const gatewayConfig = readConfig(GatewayConfig, env);
const operatorKey = gatewayConfig.HALLMARK_BOOTSTRAP_KEY;
if (!operatorKey) throw new Error('route-server needs HALLMARK_BOOTSTRAP_KEY');
const clock = () => new Date();
const instance = instanceName();
const log = createLogger({ instance, level: base.HALLMARK_LOG_LEVEL });
const infra = await createEmbedded(base, log, clock);
const running: RunningService[] = [];
for (const definition of backendServices) {
  running.push(
    await definition.start({
      name: definition.name,
      instance,
      config: readConfig(definition.configSchema, env) as never,
      base,
      log: log.child({ service: definition.name }),
      infra,
      clock,
    }),
  );
}
await migrateAccounts(infra.db);
await ensureOperator({ db: infra.db, eventStore: infra.eventStore }, operatorKey, clock());
const uncheckedKey =
  process.env.BENCH_UNCHECKED_KEY === '1'
    ? await createAuthenticator({ db: infra.db, clock }).authenticate(operatorKey)
    : undefined;
const app = await buildGatewayApp({
  config: gatewayConfig,
  bus: infra.bus,
  db: infra.db,
  eventStore: infra.eventStore,
  cache: infra.cache,
  blobs: infra.blobs,
  log: log.child({ service: 'gateway' }),
  readiness: infra.readiness,
  requestTimeoutMs: base.HALLMARK_REQUEST_TIMEOUT_MS,
  clock,
  ...(uncheckedKey ? { uncheckedKey } : {}),
});
await app.listen({ port: gatewayConfig.PORT, host: '127.0.0.1' });
stopOnSignal(
  async () => {
    await app.close();
    for (const service of running.reverse()) await service.stop();
    await infra.close();
  },
  log,
  10_000,
);
