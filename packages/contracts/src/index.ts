export { type ErrorCode, errorCodes, errorStatus, isErrorCode } from './error-codes.ts';
export { type ErrorData, HallmarkError, isErrorData, toHallmarkError } from './hallmark-error.ts';
export {
  defineRoute,
  type HttpMethod,
  type QuotaRule,
  type ResponseDefinition,
  type RouteDefinition,
  toRouterPath,
} from './http-route.ts';
export { buildOpenApiDocument, type OpenApiInfo } from './openapi.ts';
export { err, ok, type Result } from './result.ts';
export {
  apiPrefix,
  codeQrRoute,
  createAccountRoute,
  createKeyRoute,
  generateCodeRoute,
  healthRoute,
  jwksRoute,
  listKeysRoute,
  openApiRoute,
  pingServiceRoute,
  readyRoute,
  reportCodeRoute,
  revokeKeyRoute,
  rotateSigningKeyRoute,
  routes,
  verifyCodeRoute,
} from './routes.ts';
export {
  ClientSchema,
  CodeLookup,
  findCodesRpc,
  generateCodeRpc,
  PrincipalSchema,
  pingRpc,
  type RpcDefinition,
  type RpcRequest,
  type RpcResponse,
  renderQrRpc,
  reportCodeRpc,
  rotateSigningKeyRpc,
  rpcSubject,
  verifyCodeRpc,
} from './rpc.ts';
export {
  CodeReport,
  GenerateCodeBody,
  GeneratedCode,
  Location,
  QrQuery,
  QuickstartVerificationResult,
  ReportCodeBody,
  RiskIndicator,
  RiskLevel,
  Verdict,
  VerificationResult,
  VerifyCodeBody,
  VerifyCodeQuery,
} from './schemas/codes.ts';
export { ErrorEnvelope, Pagination, ResponseMeta } from './schemas/common.ts';
export {
  AccountView,
  ApiKeyView,
  CreateAccountBody,
  CreateApiKeyBody,
  CreatedAccount,
  CreatedApiKey,
  CreatedKey,
  CreateKeyBody,
  EnvironmentSchema,
  Jwks,
  KeyIdParam,
  KeyList,
  KeyView,
  ListKeysQuery,
  RegisterPublicKeyBody,
  RevokedKey,
  ScopeSchema,
  TierSchema,
  VerificationKeyView,
} from './schemas/keys.ts';
export {
  HealthResponse,
  PingRequest,
  PingResponse,
  ReadyResponse,
  ServiceNameParam,
} from './schemas/system.ts';
export {
  type Environment,
  environments,
  isScope,
  type NamedScope,
  type Principal,
  type Scope,
  scopes,
  type Tier,
  tiers,
} from './scopes.ts';
export { allServices, type BackendService, backendServices, broadcasts, isBackendService, type ServiceName } from './services.ts';
