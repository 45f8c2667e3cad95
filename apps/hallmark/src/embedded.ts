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
import { verifyService } from '@hallmark/verify-service';

/** The gateway last: it starts taking requests only once every service can answer them. */
const services: readonly ServiceDefinition[] = [codeService, verifyService, auctionService, complianceService, gatewayService];

export interface EmbeddedProduct {
  url: string;
  log: Logger;
  stop(): Promise<void>;
}

/**
 * The embedded form: all five services in this process, PGlite under HALLMARK_DATA_DIR, the
 * in-process bus and the memory cache. Needs nothing installed but Node.
 */
export async function startEmbedded(env: NodeJS.ProcessEnv = process.env): Promise<EmbeddedProduct> {
  const base = readConfig(EmbeddedConfig, env);
  const gatewayConfig = readConfig(GatewayConfig, env);
  const instance = instanceName();
  const log = createLogger({ instance, level: base.HALLMARK_LOG_LEVEL });
  const infra = await createEmbedded(base, log);
  const running: RunningService[] = [];
  for (const definition of services) {
    const config = definition.name === 'gateway' ? gatewayConfig : readConfig(definition.configSchema, env);
    const serviceLog = log.child({ service: definition.name });
    running.push(await definition.start({ name: definition.name, instance, config, base, log: serviceLog, infra }));
  }
  const url = new URL(running.at(-1)?.address ?? `http://localhost:${gatewayConfig.PORT}`);
  url.hostname = 'localhost';
  return {
    url: url.origin,
    log,
    async stop() {
      for (const service of running.reverse()) await service.stop();
      await infra.close();
      log.flush();
    },
  };
}
