import { ConfigError, DistributedConfig, readConfig } from './config.ts';
import { reportEventLoopOnSignal } from './event-loop-report.ts';
import { connectDistributed } from './infrastructure.ts';
import { installationOf, readInstallation } from './installation.ts';
import { createLogger, type Logger } from './logger.ts';
import { refuseTrivialMasterKey } from './master-key-strength.ts';
import { claimNamespace } from './namespace-claim.ts';
import { startProbeServer } from './probe-server.ts';
import { instanceName, type RunningService, type ServiceDefinition } from './service.ts';

/**
 * Stops on SIGTERM or SIGINT: runs `stop` within the timeout, then exits (1 if it did not finish).
 * A second signal exits at once.
 */
export function stopOnSignal(stop: () => Promise<void>, log: Logger, timeoutMs: number): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, 'stopping');
    const timer = setTimeout(() => {
      log.error({ timeoutMs }, 'shutdown timed out');
      log.flush();
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    stop().then(
      () => {
        log.info('stopped');
        log.flush();
        process.exit(0);
      },
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        log.flush();
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}

/** Prints a configuration error the way an operator needs it, and exits. */
export function exitOnConfigError(error: unknown, service: string): never {
  if (error instanceof ConfigError) {
    process.stderr.write(`${service}: ${error.message}\n`);
    process.exit(78); // EX_CONFIG
  }
  throw error;
}

/**
 * The distributed form of one service: validate config, connect to NATS, PostgreSQL and Redis,
 * start, serve probes, and shut down gracefully on a signal.
 */
export async function runService(definition: ServiceDefinition): Promise<void> {
  let config: DistributedConfig;
  let serviceConfig: unknown;
  try {
    config = readConfig(DistributedConfig);
    serviceConfig = readConfig(definition.configSchema);
    const masterKey = (serviceConfig as { HALLMARK_MASTER_KEY?: unknown }).HALLMARK_MASTER_KEY;
    if (typeof masterKey === 'string') refuseTrivialMasterKey(masterKey, config.HALLMARK_ENVIRONMENT);
  } catch (error) {
    exitOnConfigError(error, definition.name);
  }
  reportEventLoopOnSignal();
  const instance = instanceName();
  const log = createLogger({ service: definition.name, instance, level: config.HALLMARK_LOG_LEVEL });
  try {
    await startDistributed(definition, config, serviceConfig, instance, log);
  } catch (error) {
    log.fatal({ err: error }, 'could not start');
    log.flush();
    // A setting to change (the namespace another installation holds) exits as a configuration error does.
    if (error instanceof ConfigError) exitOnConfigError(error, definition.name);
    process.exitCode = 1;
    setTimeout(() => process.exit(1), 100).unref();
  }
}

async function startDistributed(
  definition: ServiceDefinition,
  config: DistributedConfig,
  serviceConfig: unknown,
  instance: string,
  log: Logger,
): Promise<void> {
  const infra = await connectDistributed(config, definition.name, log);
  // Before any work is taken: another installation on the same NATS or Redis under this namespace stops the start.
  const claim = await claimNamespace({
    namespace: config.HALLMARK_NAMESPACE,
    installation: await installationOf(infra.db),
    installationNow: () => readInstallation(infra.db),
    registers: await infra.namespaceRegisters(),
    log,
  });
  const running: RunningService = await definition.start({
    name: definition.name,
    instance,
    config: serviceConfig as never,
    base: config,
    log,
    infra,
    clock: () => new Date(),
  });
  const probes =
    config.HALLMARK_PROBE_PORT === undefined ? undefined : await startProbeServer(config.HALLMARK_PROBE_PORT, infra.readiness);
  log.info({ form: 'distributed', probePort: probes?.port }, 'started');
  stopOnSignal(
    async () => {
      await running.stop();
      claim.stop();
      await infra.close();
      await probes?.close();
    },
    log,
    config.HALLMARK_SHUTDOWN_TIMEOUT_MS,
  );
}
