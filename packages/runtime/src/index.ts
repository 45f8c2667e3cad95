export { BaseConfig, ConfigError, DistributedConfig, EmbeddedConfig, LogLevel, readConfig } from './config.ts';
export { createLogger, type Logger, type LoggerOptions } from './logger.ts';
export { checkReadiness, type ReadinessChecks, type ReadinessReport } from './readiness.ts';
export { startProbeServer } from './probe-server.ts';
export { connectDistributed, createEmbedded, type Infrastructure } from './infrastructure.ts';
export { serveRpc, type RpcContext } from './rpc-server.ts';
export {
  defineService,
  instanceName,
  servePing,
  stopAll,
  type RunningService,
  type ServiceContext,
  type ServiceDefinition,
} from './service.ts';
export { exitOnConfigError, runService, stopOnSignal } from './service-host.ts';
