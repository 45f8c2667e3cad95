export { errorCodes, errorStatus, isErrorCode, type ErrorCode } from './error-codes.ts';
export { HallmarkError, isErrorData, toHallmarkError, type ErrorData } from './hallmark-error.ts';
export { err, ok, type Result } from './result.ts';
export { allServices, backendServices, isBackendService, type BackendService, type ServiceName } from './services.ts';
export {
  pingRpc,
  rpcSubject,
  type RpcDefinition,
  type RpcRequest,
  type RpcResponse,
} from './rpc.ts';
export { defineRoute, toRouterPath, type HttpMethod, type ResponseDefinition, type RouteDefinition } from './http-route.ts';
export { apiPrefix, healthRoute, openApiRoute, pingServiceRoute, readyRoute, routes } from './routes.ts';
export { buildOpenApiDocument, type OpenApiInfo } from './openapi.ts';
export { ErrorEnvelope, Pagination, ResponseMeta } from './schemas/common.ts';
export {
  HealthResponse,
  PingRequest,
  PingResponse,
  ReadyResponse,
  ServiceNameParam,
} from './schemas/system.ts';
