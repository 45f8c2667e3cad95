import { ensureOperator, migrateAccounts } from '@hallmark/accounts';
import { defineService } from '@hallmark/runtime';
import { buildGatewayApp } from './app.ts';
import { GatewayConfig } from './config.ts';

/** The HTTP front door: authentication, scopes and quotas, accounts and keys, and routing to the services over the bus. */
export const gatewayService = defineService({
  name: 'gateway',
  configSchema: GatewayConfig,
  async start({ config, base, log, infra, clock }) {
    await migrateAccounts(infra.db);
    if (config.HALLMARK_BOOTSTRAP_KEY) {
      const outcome = await ensureOperator(
        { db: infra.db, eventStore: infra.eventStore },
        config.HALLMARK_BOOTSTRAP_KEY,
        clock(),
      );
      log.info({ outcome: outcome.kind, accountId: outcome.accountId }, 'operator key ensured');
    }
    const app = await buildGatewayApp({
      config,
      bus: infra.bus,
      db: infra.db,
      eventStore: infra.eventStore,
      cache: infra.cache,
      blobs: infra.blobs,
      log,
      readiness: infra.readiness,
      requestTimeoutMs: base.HALLMARK_REQUEST_TIMEOUT_MS,
      clock,
    });
    const address = await app.listen({ port: config.PORT, host: config.HALLMARK_HOST });
    log.info({ address }, 'listening');
    return {
      address,
      // Stops accepting connections, answers 503 to requests on kept-alive ones, waits for those in flight
      // and closes each connection after its answer (draining.ts).
      stop: () => app.close(),
    };
  },
});
