export {
  BaseConfig,
  ConfigError,
  DistributedConfig,
  EmbeddedConfig,
  LogLevel,
  MasterKeySetting,
  ResolverUrlSetting,
  readConfig,
} from './config.ts';
export { isDependencyOutage, outageAsUnavailable } from './dependency-outage.ts';
export { type EventLoopReport, reportEventLoopOnSignal } from './event-loop-report.ts';
export { createEventLoopTurns, type EventLoopTurns } from './event-loop-turns.ts';
export { connectDistributed, createEmbedded, type Infrastructure } from './infrastructure.ts';
export { createLogger, type Logger, type LoggerOptions } from './logger.ts';
export { refuseTrivialMasterKey } from './master-key-strength.ts';
export { startProbeServer } from './probe-server.ts';
export { checkReadiness, createSharedReadiness, type ReadinessChecks, type ReadinessReport } from './readiness.ts';
export { type RemovedChunk, removalChunk, removeChunksForATurn } from './removal-turn.ts';
export { type RpcContext, serveRpc } from './rpc-server.ts';
export {
  defineService,
  instanceName,
  type RunningService,
  type ServiceContext,
  type ServiceDefinition,
  servePing,
  stopAll,
} from './service.ts';
export { exitOnConfigError, runService, stopOnSignal } from './service-host.ts';
export { isDateTime, parseDateTime } from './typebox-formats.ts';
export { createWorkSlots, type WorkSlots } from './work-slots.ts';
