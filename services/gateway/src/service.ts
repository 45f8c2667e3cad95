import { defineService } from '@hallmark/runtime';
import { buildGatewayApp } from './app.ts';
import { GatewayConfig } from './config.ts';

/** The HTTP front door: routing to the services over the bus, and (issue #3) authentication and quotas. */
export const gatewayService = defineService({
  name: 'gateway',
  configSchema: GatewayConfig,
  async start({ config, base, log, infra }) {
    const app = await buildGatewayApp({
      config,
      bus: infra.bus,
      log,
      readiness: infra.readiness,
      requestTimeoutMs: base.HALLMARK_REQUEST_TIMEOUT_MS,
    });
    const address = await app.listen({ port: config.PORT, host: config.HALLMARK_HOST });
    log.info({ address }, 'listening');
    return {
      address,
      // Stops accepting connections, answers 503 to requests on kept-alive ones, and waits for those in flight.
      stop: () => app.close(),
    };
  },
});
