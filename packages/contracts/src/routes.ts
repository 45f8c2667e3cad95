import { Type } from '@sinclair/typebox';
import { codeListingRoutes } from './code-listing-routes.ts';
import { consoleRoutes } from './console-routes.ts';
import { defineRoute } from './http-route.ts';
import { keyRotationRoutes } from './key-rotation-routes.ts';
import { linkRoutes } from './link-routes.ts';
import { scanRoutes } from './scan-routes.ts';
import {
  ConfirmTransferBody,
  DashboardList,
  DashboardQuery,
  InitiateTransferBody,
  ObjectIdParam,
  PhotoUploaded,
  PhotoUploadForm,
  ProvenanceEventBody,
  ProvenanceHistory,
  PublicVerification,
  RecordedProvenanceEvent,
  RegisteredObject,
  RegisterObjectBody,
  SerialParam,
  TransferCancelled,
  TransferConfirmed,
  TransferIdParam,
  TransferInitiated,
} from './schemas/auction.ts';
import { BrandingInput, BrandingView, BrandLogoParam, BrandThemeParam } from './schemas/branding.ts';
import {
  CodeReport,
  CodeReportList,
  CodeReportView,
  DecideReportBody,
  GenerateBatchBody,
  GenerateBatchResult,
  GenerateCodeBody,
  GeneratedCode,
  ListCodeReportsQuery,
  QrQuery,
  QuickstartVerificationResult,
  ReportCodeBody,
  ReportIdParam,
  VerificationResult,
  VerifyCodeBody,
  VerifyCodeQuery,
} from './schemas/codes.ts';
import {
  AssetIdParam,
  ChainVerification,
  ComplianceConfigPatch,
  ComplianceConfigView,
  ComplianceExport,
  ConsistencyProof,
  ConsistencyQuery,
  ExportQuery,
  MerkleProof,
  MerkleProofQuery,
  MerkleRoot,
} from './schemas/compliance.ts';
import {
  AccountIdParam,
  GtinClaimIdParam,
  GtinClaimInput,
  GtinClaimList,
  GtinClaimView,
  ListGtinClaimsQuery,
} from './schemas/gtins.ts';
import {
  CreateAccountBody,
  CreatedAccount,
  CreatedKey,
  CreateKeyBody,
  Jwks,
  KeyIdParam,
  KeyList,
  ListKeysQuery,
  RevokedKey,
  VerificationKeyView,
} from './schemas/keys.ts';
import { AccountList, ListAccountsQuery, MyAccount } from './schemas/me.ts';
import {
  CreateSchemaBody,
  ListSchemasQuery,
  SchemaIdParam,
  SchemaList,
  SchemaVersionQuery,
  SchemaView,
  UpdateSchemaBody,
  ValidateMetadataBody,
  ValidationOutcome,
} from './schemas/metadata-schemas.ts';
import { HtmlPage, ResolverLinkParam, ResolverQuery, ResolverReportForm } from './schemas/resolver.ts';
import { HealthResponse, Landing, PingRequest, PingResponse, ReadyResponse, ServiceNameParam } from './schemas/system.ts';
import { sessionRoutes } from './session-routes.ts';
import { usageRoutes } from './usage-routes.ts';
import { webhookRoutes } from './webhook-routes.ts';

export const apiPrefix = '/api/v1';

export const healthRoute = defineRoute({
  operationId: 'getHealth',
  method: 'GET',
  path: '/health',
  summary: 'Liveness: the process is up and serving.',
  tags: ['system'],
  auth: 'public',
  responses: { 200: { description: 'Alive', schema: HealthResponse } },
  errors: [],
});

export const landingRoute = defineRoute({
  operationId: 'getLanding',
  method: 'GET',
  path: '/',
  summary: 'Where to find the OpenAPI document, the docs and the console (the resolver has the paths below /).',
  tags: ['system'],
  auth: 'public',
  responses: { 200: { description: 'Pointers to the rest', schema: Landing } },
  errors: [],
});

export const readyRoute = defineRoute({
  operationId: 'getReady',
  method: 'GET',
  path: '/ready',
  summary: 'Readiness: every dependency this process needs is reachable.',
  tags: ['system'],
  auth: 'public',
  responses: { 200: { description: 'Ready', schema: ReadyResponse } },
  errors: ['SERVICE_UNAVAILABLE'],
});

export const openApiRoute = defineRoute({
  operationId: 'getOpenApiDocument',
  method: 'GET',
  path: `${apiPrefix}/openapi.json`,
  summary: 'This OpenAPI 3.1 document (gzip when asked, an ETag, cached 5 minutes).',
  tags: ['system'],
  auth: 'public',
  publicRateLimit: true,
  responses: { 200: { description: 'The OpenAPI document', schema: Type.Object({}, { additionalProperties: true }) } },
  errors: ['RATE_LIMITED'],
});

export const pingServiceRoute = defineRoute({
  operationId: 'pingService',
  method: 'POST',
  path: `${apiPrefix}/system/ping/{service}`,
  summary: 'Round trip gateway → bus → service → gateway; names the replica that answered.',
  tags: ['system'],
  auth: 'optional-key',
  // Without a key, limited per client address; with one, counted against the key's account.
  publicRateLimit: true,
  params: ServiceNameParam,
  body: PingRequest,
  bodyOptional: true,
  responses: { 200: { description: 'The service answered', schema: PingResponse } },
  errors: ['VALIDATION_ERROR', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
});

export const jwksRoute = defineRoute({
  operationId: 'getJwks',
  method: 'GET',
  path: '/.well-known/jwks.json',
  summary: 'Every public key that signs or verifies codes (RFC 8037 OKP keys with kid), for offline verification.',
  tags: ['keys'],
  auth: 'public',
  responses: {
    200: { description: 'The key set (gzip when asked; ETag, and 304 to an If-None-Match of the current one)', schema: Jwks },
  },
  errors: [],
});

export const createAccountRoute = defineRoute({
  operationId: 'createAccount',
  method: 'POST',
  idempotent: true,
  path: `${apiPrefix}/accounts`,
  summary: 'Provision a tenant account with its first API key (operator only).',
  tags: ['accounts'],
  auth: 'api-key',
  scope: 'accounts:write',
  body: CreateAccountBody,
  responses: { 201: { description: 'The account and its first key; the secret is shown once', schema: CreatedAccount } },
  errors: ['VALIDATION_ERROR'],
});

export const getMyAccountRoute = defineRoute({
  operationId: 'getMyAccount',
  method: 'GET',
  path: `${apiPrefix}/accounts/me`,
  summary: 'The account the calling key belongs to, and that key: its id, environment, scopes and expiry (any scope).',
  tags: ['accounts'],
  auth: 'api-key',
  responses: { 200: { description: 'The caller’s account and key', schema: MyAccount } },
  errors: [],
});

export const listAccountsRoute = defineRoute({
  operationId: 'listAccounts',
  method: 'GET',
  path: `${apiPrefix}/accounts`,
  summary: 'Every account, newest first, with cursor paging (operator only).',
  tags: ['accounts'],
  auth: 'api-key',
  scope: 'accounts:write',
  querystring: ListAccountsQuery,
  responses: { 200: { description: 'A page of accounts', schema: AccountList } },
  errors: ['VALIDATION_ERROR'],
});

export const grantGtinRoute = defineRoute({
  operationId: 'grantGtin',
  method: 'POST',
  idempotent: true,
  path: `${apiPrefix}/accounts/{accountId}/gtins`,
  summary:
    'Grant an account a GTIN or a GS1 Company Prefix it may sign codes for (operator only). Refused with 409 when another account owns an overlapping one.',
  tags: ['accounts'],
  auth: 'api-key',
  scope: 'accounts:write',
  params: AccountIdParam,
  body: GtinClaimInput,
  responses: { 201: { description: 'The grant', schema: GtinClaimView } },
  errors: ['VALIDATION_ERROR', 'INVALID_GTIN', 'NOT_FOUND', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
});

export const listAccountGtinsRoute = defineRoute({
  operationId: 'listAccountGtins',
  method: 'GET',
  path: `${apiPrefix}/accounts/{accountId}/gtins`,
  summary: 'The GTINs and company prefixes an account owns, newest first (operator only).',
  tags: ['accounts'],
  auth: 'api-key',
  scope: 'accounts:write',
  params: AccountIdParam,
  querystring: ListGtinClaimsQuery,
  responses: { 200: { description: 'A page of claims', schema: GtinClaimList } },
  errors: ['VALIDATION_ERROR', 'NOT_FOUND', 'SERVICE_UNAVAILABLE'],
});

export const claimGtinRoute = defineRoute({
  operationId: 'claimGtin',
  method: 'POST',
  idempotent: true,
  path: `${apiPrefix}/gtins`,
  summary:
    'Claim a GTIN or company prefix for the caller’s account: allowed only in the test environment, and only where the operator enabled self-service claims.',
  tags: ['codes'],
  auth: 'api-key',
  scope: 'assets:create',
  body: GtinClaimInput,
  responses: { 201: { description: 'The claim', schema: GtinClaimView } },
  errors: ['VALIDATION_ERROR', 'INVALID_GTIN', 'GTIN_CLAIM_NOT_ALLOWED', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
});

export const listGtinsRoute = defineRoute({
  operationId: 'listGtins',
  method: 'GET',
  path: `${apiPrefix}/gtins`,
  summary: 'The GTINs and company prefixes the caller’s account may sign codes for, newest first.',
  tags: ['codes'],
  auth: 'api-key',
  scope: 'assets:read',
  querystring: ListGtinClaimsQuery,
  responses: { 200: { description: 'A page of claims', schema: GtinClaimList } },
  errors: ['VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
});

export const revokeGtinClaimRoute = defineRoute({
  operationId: 'revokeGtinClaim',
  method: 'POST',
  path: `${apiPrefix}/gtins/{claimId}/revoke`,
  summary:
    'Give up a GTIN or prefix (the owner), or take it away (the operator). Codes signed under it stop verifying as authentic.',
  tags: ['codes'],
  auth: 'api-key',
  scope: 'assets:create',
  params: GtinClaimIdParam,
  responses: { 200: { description: 'Revoked (also when it already was)', schema: GtinClaimView } },
  errors: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
});

export const createKeyRoute = defineRoute({
  operationId: 'createKey',
  method: 'POST',
  idempotent: true,
  path: `${apiPrefix}/keys`,
  summary:
    'Create an API key (name, scopes, expiresIn), or register an external Ed25519 public key (name, publicKey, algorithm, proof).',
  tags: ['keys'],
  auth: 'api-key',
  scope: 'keys:write',
  body: CreateKeyBody,
  responses: { 201: { description: 'The new key; an API key carries its secret, once', schema: CreatedKey } },
  errors: ['VALIDATION_ERROR', 'CONFLICT'],
});

export const listKeysRoute = defineRoute({
  operationId: 'listKeys',
  method: 'GET',
  path: `${apiPrefix}/keys`,
  summary: 'API keys, registered public keys and service signing keys of the caller’s account and environment; never a secret.',
  tags: ['keys'],
  auth: 'api-key',
  scope: 'keys:read',
  querystring: ListKeysQuery,
  responses: { 200: { description: 'A page of keys, newest first', schema: KeyList } },
  errors: ['VALIDATION_ERROR'],
});

export const revokeKeyRoute = defineRoute({
  operationId: 'revokeKey',
  method: 'POST',
  path: `${apiPrefix}/keys/{id}/revoke`,
  summary: 'Revoke an API key or a registered public key, at once on every gateway.',
  tags: ['keys'],
  auth: 'api-key',
  scope: 'keys:write',
  params: KeyIdParam,
  responses: { 200: { description: 'Revoked (also when it already was)', schema: RevokedKey } },
  errors: ['CONFLICT'],
});

export const rotateSigningKeyRoute = defineRoute({
  operationId: 'rotateSigningKey',
  method: 'POST',
  idempotent: true,
  path: `${apiPrefix}/keys/signing/rotate`,
  summary: 'Make a new service signing key the active one; codes signed by earlier keys keep verifying.',
  tags: ['keys'],
  auth: 'api-key',
  scope: 'keys:write',
  responses: { 201: { description: 'The new active signing key', schema: VerificationKeyView } },
  errors: ['RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
});

export const generateCodeRoute = defineRoute({
  operationId: 'generateCode',
  method: 'POST',
  idempotent: true,
  path: `${apiPrefix}/code/generate`,
  summary:
    'Generate an Ed25519-signed GS1 Digital Link for one item. An Idempotency-Key header makes a retry return the first answer.',
  tags: ['codes'],
  auth: 'api-key',
  scope: 'assets:create',
  quota: { kind: 'generate', per: 'request' },
  body: GenerateCodeBody,
  responses: { 201: { description: 'The signed code', schema: GeneratedCode } },
  errors: ['INVALID_GTIN', 'MISSING_REQUIRED_FIELD', 'DUPLICATE_SERIAL', 'VALIDATION_ERROR', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
});

export const generateCodeBatchRoute = defineRoute({
  operationId: 'generateCodeBatch',
  method: 'POST',
  idempotent: true,
  path: `${apiPrefix}/code/generate/batch`,
  summary: 'Generate up to 10,000 codes; each item is checked on its own and answered in results by its index.',
  tags: ['codes'],
  auth: 'api-key',
  scope: 'assets:create',
  quota: { kind: 'generate', per: 'item' },
  body: GenerateBatchBody,
  bodyLimit: 16 * 1024 * 1024,
  responses: {
    200: { description: 'One result per item, in order: { index, code } or { index, error }', schema: GenerateBatchResult },
  },
  errors: ['VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
});

export const verifyCodeRoute = defineRoute({
  operationId: 'verifyCode',
  method: 'POST',
  path: `${apiPrefix}/code/verify`,
  summary: 'Verify a code from its URL or raw QR content: verdict, confidence, checks, scan history and risk indicators.',
  tags: ['codes'],
  auth: 'api-key',
  scope: 'assets:verify',
  quota: { kind: 'verify', per: 'request' },
  querystring: VerifyCodeQuery,
  body: VerifyCodeBody,
  responses: {
    200: {
      description: 'The verification result (with ?view=quickstart: scanNumber and firstSeen at the top)',
      schema: Type.Union([VerificationResult, QuickstartVerificationResult]),
    },
  },
  errors: ['INVALID_URL', 'MISSING_SIGNATURE', 'KEY_NOT_FOUND', 'VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
});

export const reportCodeRoute = defineRoute({
  operationId: 'reportCode',
  method: 'POST',
  idempotent: true,
  path: `${apiPrefix}/code/report`,
  summary:
    'Report a code seen on a fake. The report waits in the code owner’s review queue and changes no verdict until the owner confirms it. Limited per account per hour.',
  tags: ['codes'],
  auth: 'api-key',
  scope: 'assets:verify',
  body: ReportCodeBody,
  responses: { 201: { description: 'The report is pending in the code owner’s queue', schema: CodeReport } },
  errors: ['INVALID_URL', 'MISSING_SIGNATURE', 'NOT_FOUND', 'RATE_LIMITED', 'VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
});

export const listCodeReportsRoute = defineRoute({
  operationId: 'listCodeReports',
  method: 'GET',
  path: `${apiPrefix}/code/reports`,
  summary: 'The review queue: reports of the caller’s codes, newest first, filtered by status.',
  tags: ['codes'],
  auth: 'api-key',
  scope: 'assets:read',
  querystring: ListCodeReportsQuery,
  responses: { 200: { description: 'A page of reports', schema: CodeReportList } },
  errors: ['VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
});

export const confirmCodeReportRoute = defineRoute({
  operationId: 'confirmCodeReport',
  method: 'POST',
  path: `${apiPrefix}/code/reports/{reportId}/confirm`,
  summary:
    'Confirm a pending report of one of the caller’s codes: the code is blocked, its verifications and public page say SUSPICIOUS with KNOWN_COUNTERFEIT_PATTERN and the reason.',
  tags: ['codes'],
  auth: 'api-key',
  scope: 'assets:create',
  params: ReportIdParam,
  body: DecideReportBody,
  bodyOptional: true,
  responses: { 200: { description: 'The report, confirmed', schema: CodeReportView } },
  errors: ['NOT_FOUND', 'CONFLICT', 'VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
});

export const dismissCodeReportRoute = defineRoute({
  operationId: 'dismissCodeReport',
  method: 'POST',
  path: `${apiPrefix}/code/reports/{reportId}/dismiss`,
  summary: 'Dismiss a pending report of one of the caller’s codes; nothing changes for the code.',
  tags: ['codes'],
  auth: 'api-key',
  scope: 'assets:create',
  params: ReportIdParam,
  body: DecideReportBody,
  bodyOptional: true,
  responses: { 200: { description: 'The report, dismissed', schema: CodeReportView } },
  errors: ['NOT_FOUND', 'CONFLICT', 'VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
});

export const liftCodeReportRoute = defineRoute({
  operationId: 'liftCodeReport',
  method: 'POST',
  path: `${apiPrefix}/code/reports/{reportId}/lift`,
  summary:
    'Lift the block of a confirmed report of one of the caller’s codes (a confirmation made in error): the code verifies as it did before, unless another confirmed report or a blocklist entry still blocks it; the lift is appended to the code’s history.',
  tags: ['codes'],
  auth: 'api-key',
  scope: 'assets:create',
  params: ReportIdParam,
  body: DecideReportBody,
  bodyOptional: true,
  responses: { 200: { description: 'The report, lifted', schema: CodeReportView } },
  errors: ['NOT_FOUND', 'CONFLICT', 'VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
});

export const codeQrRoute = defineRoute({
  operationId: 'getCodeQr',
  method: 'GET',
  path: `${apiPrefix}/code/qr`,
  summary:
    'A QR image of a code: error correction M, quiet zone of 4 modules; a PNG sized for print with mm and dpi. ' +
    'At most 4096 pixels a side (size, or mm × dpi / 25.4), else 400 VALIDATION_ERROR; 503 with Retry-After while the renderers are full. ' +
    'Cache-Control: private, no-store.',
  tags: ['codes'],
  auth: 'api-key',
  scope: 'assets:read',
  querystring: QrQuery,
  responses: {
    200: {
      description: 'The image (image/svg+xml or image/png)',
      schema: Type.String({ contentEncoding: 'binary' }),
      contentType: 'image/svg+xml',
    },
  },
  errors: ['INVALID_URL', 'MISSING_SIGNATURE', 'VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
});

const schemaErrors = ['VALIDATION_ERROR', 'NOT_FOUND', 'SERVICE_UNAVAILABLE'] as const;

export const createSchemaRoute = defineRoute({
  operationId: 'createSchema',
  method: 'POST',
  idempotent: true,
  path: `${apiPrefix}/schemas`,
  summary: 'Create a metadata schema (name, vertical, fields), or copy a template (copyFrom).',
  tags: ['schemas'],
  auth: 'api-key',
  scope: 'schemas:write',
  body: CreateSchemaBody,
  responses: { 201: { description: 'The schema, version 1', schema: SchemaView } },
  errors: [...schemaErrors, 'CONFLICT'],
});

export const listSchemasRoute = defineRoute({
  operationId: 'listSchemas',
  method: 'GET',
  path: `${apiPrefix}/schemas`,
  summary: 'The account’s schemas (or, with templates=true, the read-only templates), filtered by vertical.',
  tags: ['schemas'],
  auth: 'api-key',
  scope: 'schemas:read',
  querystring: ListSchemasQuery,
  responses: { 200: { description: 'A page of schemas, newest first', schema: SchemaList } },
  errors: ['VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
});

export const getSchemaRoute = defineRoute({
  operationId: 'getSchema',
  method: 'GET',
  path: `${apiPrefix}/schemas/{id}`,
  summary: 'A schema, at its current version or an earlier one (?version=).',
  tags: ['schemas'],
  auth: 'api-key',
  scope: 'schemas:read',
  params: SchemaIdParam,
  querystring: SchemaVersionQuery,
  responses: { 200: { description: 'The schema', schema: SchemaView } },
  errors: [...schemaErrors],
});

export const updateSchemaRoute = defineRoute({
  operationId: 'updateSchema',
  method: 'PATCH',
  path: `${apiPrefix}/schemas/{id}`,
  summary: 'Change a schema; its version goes up by one and earlier versions stay readable.',
  tags: ['schemas'],
  auth: 'api-key',
  scope: 'schemas:write',
  params: SchemaIdParam,
  body: UpdateSchemaBody,
  responses: { 200: { description: 'The schema at its new version', schema: SchemaView } },
  errors: [...schemaErrors, 'CONFLICT'],
});

export const deleteSchemaRoute = defineRoute({
  operationId: 'deleteSchema',
  method: 'DELETE',
  path: `${apiPrefix}/schemas/{id}`,
  summary: 'Delete a schema; generation can no longer use it.',
  tags: ['schemas'],
  auth: 'api-key',
  scope: 'schemas:write',
  params: SchemaIdParam,
  responses: { 204: { description: 'Deleted' } },
  errors: [...schemaErrors, 'CONFLICT'],
});

export const validateMetadataRoute = defineRoute({
  operationId: 'validateMetadata',
  method: 'POST',
  path: `${apiPrefix}/schemas/{id}/validate`,
  summary: 'Check a data object against a schema: isValid and every error with its field path.',
  tags: ['schemas'],
  auth: 'api-key',
  scope: 'schemas:read',
  params: SchemaIdParam,
  querystring: SchemaVersionQuery,
  body: ValidateMetadataBody,
  responses: { 200: { description: 'The outcome', schema: ValidationOutcome } },
  errors: [...schemaErrors],
});

const complianceErrors = ['NOT_FOUND', 'VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'] as const;

export const verifyChainRoute = defineRoute({
  operationId: 'verifyProvenanceChain',
  method: 'GET',
  path: `${apiPrefix}/compliance/{assetId}/verify`,
  summary: 'Recompute an asset’s hash chain from the event store: isValid, eventCount, head hash, and where it breaks.',
  tags: ['compliance'],
  auth: 'api-key',
  scope: 'documents:read',
  params: AssetIdParam,
  responses: { 200: { description: 'The chain check', schema: ChainVerification } },
  errors: [...complianceErrors],
});

export const merkleRootRoute = defineRoute({
  operationId: 'getMerkleRoot',
  method: 'GET',
  path: `${apiPrefix}/compliance/{assetId}/merkle/root`,
  summary: 'The RFC 9162 Merkle root over an asset’s events, with a signed checkpoint.',
  tags: ['compliance'],
  auth: 'api-key',
  scope: 'documents:read',
  params: AssetIdParam,
  responses: { 200: { description: 'Root and checkpoint', schema: MerkleRoot } },
  errors: [...complianceErrors],
});

export const merkleProofRoute = defineRoute({
  operationId: 'getMerkleProof',
  method: 'GET',
  path: `${apiPrefix}/compliance/{assetId}/merkle/proof`,
  summary: 'An RFC 9162 inclusion proof of one event (?eventId=) against a signed checkpoint.',
  tags: ['compliance'],
  auth: 'api-key',
  scope: 'documents:read',
  params: AssetIdParam,
  querystring: MerkleProofQuery,
  responses: { 200: { description: 'The inclusion proof', schema: MerkleProof } },
  errors: [...complianceErrors],
});

export const merkleConsistencyRoute = defineRoute({
  operationId: 'getMerkleConsistency',
  method: 'GET',
  path: `${apiPrefix}/compliance/{assetId}/merkle/consistency`,
  summary: 'An RFC 9162 consistency proof that the tree of size `to` extends the one of size `from`.',
  tags: ['compliance'],
  auth: 'api-key',
  scope: 'documents:read',
  params: AssetIdParam,
  querystring: ConsistencyQuery,
  responses: { 200: { description: 'The consistency proof', schema: ConsistencyProof } },
  errors: [...complianceErrors],
});

export const complianceExportRoute = defineRoute({
  operationId: 'exportCompliance',
  method: 'GET',
  path: `${apiPrefix}/compliance/{assetId}/export`,
  summary: 'Every event with its hashes and inclusion proof, the root and the signed checkpoint; streamed.',
  tags: ['compliance'],
  auth: 'api-key',
  scope: 'documents:read',
  params: AssetIdParam,
  querystring: ExportQuery,
  responses: {
    200: {
      description: 'The export (application/json, or text/csv with format=csv: see docs/COMPLIANCE.md)',
      schema: ComplianceExport,
    },
  },
  errors: [...complianceErrors],
});

export const getComplianceConfigRoute = defineRoute({
  operationId: 'getComplianceConfig',
  method: 'GET',
  path: `${apiPrefix}/compliance/config`,
  summary: 'The account’s compliance rules: risk thresholds, retention, evidence rules, export format.',
  tags: ['compliance'],
  auth: 'api-key',
  scope: 'documents:read',
  responses: { 200: { description: 'The config', schema: ComplianceConfigView } },
  errors: ['SERVICE_UNAVAILABLE'],
});

export const updateComplianceConfigRoute = defineRoute({
  operationId: 'updateComplianceConfig',
  method: 'PATCH',
  path: `${apiPrefix}/compliance/config`,
  summary: 'Change compliance rules (objects merge, values replace); recorded as an audit event.',
  tags: ['compliance'],
  auth: 'api-key',
  scope: 'compliance:write',
  body: ComplianceConfigPatch,
  responses: { 200: { description: 'The new config', schema: ComplianceConfigView } },
  errors: ['VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
});

const auctionErrors = ['VALIDATION_ERROR', 'NOT_FOUND', 'SERVICE_UNAVAILABLE'] as const;

export const registerObjectRoute = defineRoute({
  operationId: 'registerAuctionObject',
  method: 'POST',
  idempotent: true,
  path: `${apiPrefix}/auction/objects/register`,
  summary:
    'Register an object (status consigned) with a signed GS1 Digital Link and a service serial. Spends one unit of the daily generate quota, as a code does.',
  tags: ['auction'],
  auth: 'api-key',
  scope: 'assets:create',
  quota: { kind: 'generate', per: 'request' },
  body: RegisterObjectBody,
  responses: { 201: { description: 'The object and its signed link', schema: RegisteredObject } },
  errors: ['VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
});

export const uploadPhotoRoute = defineRoute({
  operationId: 'uploadAuctionPhoto',
  method: 'POST',
  idempotent: true,
  path: `${apiPrefix}/auction/objects/{objectId}/photos`,
  summary:
    'Bind a reference photo (multipart: photo, angle) to one of the category’s angles; a new upload replaces the angle. ' +
    'JPEG, PNG or WebP, at most 40 megapixels; the picture bound at another angle (perceptual hashes at most 10 bits apart) is 409.',
  tags: ['auction'],
  auth: 'api-key',
  scope: 'assets:create',
  params: ObjectIdParam,
  formBody: { contentType: 'multipart/form-data', schema: PhotoUploadForm },
  responses: { 201: { description: 'The bound photo and the object’s photo status', schema: PhotoUploaded } },
  errors: [...auctionErrors, 'CONFLICT', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'REQUEST_TIMEOUT'],
});

export const recordProvenanceEventRoute = defineRoute({
  operationId: 'recordProvenanceEvent',
  method: 'POST',
  idempotent: true,
  path: `${apiPrefix}/auction/provenance/events`,
  summary: 'Record a provenance event; listed and withdrawn move the status (409 when the state does not allow it).',
  tags: ['auction'],
  auth: 'api-key',
  scope: 'assets:create',
  body: ProvenanceEventBody,
  responses: { 201: { description: 'The stored event with its hash and position', schema: RecordedProvenanceEvent } },
  errors: [...auctionErrors, 'CONFLICT'],
});

export const publicVerifyObjectRoute = defineRoute({
  operationId: 'publicVerifyAuctionObject',
  method: 'GET',
  path: `${apiPrefix}/auction/public/verify/{serial}`,
  summary: 'Public verification of an object by its serial: no key, no owner data; rate-limited per client address.',
  tags: ['auction'],
  auth: 'public',
  publicRateLimit: true,
  params: SerialParam,
  responses: { 200: { description: 'The public verification', schema: PublicVerification } },
  errors: ['NOT_FOUND', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
});

export const provenanceHistoryRoute = defineRoute({
  operationId: 'getAuctionProvenance',
  method: 'GET',
  path: `${apiPrefix}/auction/objects/{serial}/provenance`,
  summary: 'An object’s events and chain of custody, with chain_valid from a real chain check.',
  tags: ['auction'],
  auth: 'api-key',
  scope: 'assets:read',
  params: SerialParam,
  responses: { 200: { description: 'The provenance history', schema: ProvenanceHistory } },
  errors: [...auctionErrors],
});

export const initiateTransferRoute = defineRoute({
  operationId: 'initiateTransfer',
  method: 'POST',
  idempotent: true,
  path: `${apiPrefix}/auction/transfers/initiate`,
  summary: 'Start an ownership transfer: a 6-digit code, valid 72 hours, shown once.',
  tags: ['auction'],
  auth: 'api-key',
  scope: 'assets:create',
  body: InitiateTransferBody,
  responses: { 201: { description: 'The pending transfer and its code', schema: TransferInitiated } },
  errors: [...auctionErrors, 'CONFLICT'],
});

export const confirmTransferRoute = defineRoute({
  operationId: 'confirmTransfer',
  method: 'POST',
  // A retry whose first answer was lost gets that answer (200), not the completed transfer's 409.
  idempotent: true,
  path: `${apiPrefix}/auction/transfers/{transferId}/confirm`,
  summary: 'Confirm a transfer with its code; 5 wrong codes lock it.',
  tags: ['auction'],
  auth: 'api-key',
  scope: 'assets:transfer',
  params: TransferIdParam,
  body: ConfirmTransferBody,
  responses: { 200: { description: 'The completed transfer', schema: TransferConfirmed } },
  errors: [...auctionErrors, 'CONFLICT', 'GONE'],
});

export const cancelTransferRoute = defineRoute({
  operationId: 'cancelTransfer',
  method: 'POST',
  path: `${apiPrefix}/auction/transfers/{transferId}/cancel`,
  summary:
    'Cancel a pending transfer (the seller’s: a buyer who backed out, a code sent to the wrong person): its code completes nothing from then on and the object is free for a new transfer. Cancelling again answers the same.',
  tags: ['auction'],
  auth: 'api-key',
  scope: 'assets:create',
  params: TransferIdParam,
  responses: { 200: { description: 'The cancelled transfer', schema: TransferCancelled } },
  errors: [...auctionErrors, 'CONFLICT'],
});

export const auctionDashboardRoute = defineRoute({
  operationId: 'listAuctionObjects',
  method: 'GET',
  path: `${apiPrefix}/auction/dashboard/objects`,
  summary: 'The account’s objects with their photo status, newest first, filtered by status.',
  tags: ['auction'],
  auth: 'api-key',
  scope: 'assets:read',
  querystring: DashboardQuery,
  responses: { 200: { description: 'A page of objects', schema: DashboardList } },
  errors: ['VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
});

const htmlPage = (description: string) => ({ description, schema: HtmlPage, contentType: 'text/html' });

export const resolverPageRoute = defineRoute({
  operationId: 'resolveCode',
  method: 'GET',
  path: '/01/{linkPath}',
  catchAll: true,
  params: ResolverLinkParam,
  summary:
    'The GS1-conformant resolver (docs/RESOLVER.md): a 307 redirect to the item’s default link (the verification page /verify/01/…, unless the brand set another), or with ?linkType=<GS1 link type> to that link (404 when the item has none); ?linkType=linkset (or all) or Accept: application/linkset+json answers the RFC 9264 linkset; Accept: application/json the verification result (a scan). The query string is passed on to the target.',
  tags: ['resolver'],
  auth: 'public',
  publicRateLimit: true,
  querystring: ResolverQuery,
  responses: {
    200: htmlPage('The linkset (application/linkset+json) or the verification result (application/json)'),
    307: { description: 'To the default link, or to the link of the requested linkType' },
    400: htmlPage('A readable page saying what is wrong with the link'),
    404: htmlPage('The item has no link of the requested linkType'),
  },
  errors: ['NOT_FOUND', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
});

export const resolverOptionsRoute = defineRoute({
  operationId: 'resolverOptions',
  method: 'OPTIONS',
  path: '/01/{linkPath}',
  catchAll: true,
  params: ResolverLinkParam,
  summary: 'CORS preflight for the resolver: GET, HEAD and OPTIONS from any origin.',
  tags: ['resolver'],
  auth: 'public',
  responses: { 204: { description: 'Allowed methods and headers' } },
  errors: [],
});

export const resolverReportRoute = defineRoute({
  operationId: 'reportFromResolver',
  method: 'POST',
  path: '/resolver/report',
  summary:
    'The resolver page’s “report this product” form (application/x-www-form-urlencoded: link, reason): a pending report in the code owner’s queue. Limited per client address per hour.',
  tags: ['resolver'],
  auth: 'public',
  formBody: { contentType: 'application/x-www-form-urlencoded', schema: ResolverReportForm },
  publicRateLimit: true,
  responses: { 200: htmlPage('Thanks, and what happens next'), 400: htmlPage('What was wrong with the report') },
  errors: ['RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
});

export const gs1ResolverDescriptionRoute = defineRoute({
  operationId: 'getGs1ResolverDescription',
  method: 'GET',
  path: '/.well-known/gs1resolver',
  summary:
    'The GS1 resolver description file (valid against GS1’s description-file schema 1.2.0): name, root, primary keys by AI, link types.',
  tags: ['resolver'],
  auth: 'public',
  responses: { 200: { description: 'The description', schema: Type.Object({}, { additionalProperties: true }) } },
  errors: [],
});

export const getBrandingRoute = defineRoute({
  operationId: 'getBranding',
  method: 'GET',
  path: `${apiPrefix}/account/branding`,
  summary: 'The brand’s name, colours and logo as the resolver page shows them, for the caller’s account and environment.',
  tags: ['account'],
  auth: 'api-key',
  scope: 'assets:read',
  responses: { 200: { description: 'The branding (fields null when unset)', schema: BrandingView } },
  errors: [],
});

export const updateBrandingRoute = defineRoute({
  operationId: 'updateBranding',
  method: 'PUT',
  path: `${apiPrefix}/account/branding`,
  summary:
    'Set the brand’s display name and colours (#rrggbb; text on the band needs a WCAG contrast of 4.5:1, else 400). ' +
    'Fields left out keep their value, null clears one. Needs scope *; recorded as an audit event.',
  tags: ['account'],
  auth: 'api-key',
  scope: '*',
  body: BrandingInput,
  responses: { 200: { description: 'The branding now', schema: BrandingView } },
  errors: ['VALIDATION_ERROR'],
});

export const uploadBrandingLogoRoute = defineRoute({
  operationId: 'uploadBrandingLogo',
  method: 'PUT',
  path: `${apiPrefix}/account/branding/logo`,
  summary:
    'Set the logo: the body is the image itself, Content-Type image/png or image/jpeg (SVG and anything else 415), ' +
    'at most 512 KiB (413) and 2048 pixels a side, decoded and stored re-encoded as PNG, served from this origin. ' +
    'Another upload replaces it; DELETE removes it. Needs scope *; recorded as an audit event.',
  tags: ['account'],
  auth: 'api-key',
  scope: '*',
  bodyLimit: 524_288,
  formBody: {
    contentType: 'image/png',
    alsoAs: ['image/jpeg'],
    schema: Type.String({ contentEncoding: 'binary', description: 'the PNG or JPEG bytes (image/png or image/jpeg)' }),
  },
  responses: { 200: { description: 'The branding with its new logo', schema: BrandingView } },
  errors: ['VALIDATION_ERROR', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'SERVICE_UNAVAILABLE', 'REQUEST_TIMEOUT'],
});

export const deleteBrandingLogoRoute = defineRoute({
  operationId: 'deleteBrandingLogo',
  method: 'DELETE',
  path: `${apiPrefix}/account/branding/logo`,
  summary: 'Remove the logo (the page then shows the name alone). Needs scope *; recorded as an audit event.',
  tags: ['account'],
  auth: 'api-key',
  scope: '*',
  responses: { 200: { description: 'The branding without a logo (also when it had none)', schema: BrandingView } },
  errors: [],
});

export const brandLogoRoute = defineRoute({
  operationId: 'getBrandLogo',
  method: 'GET',
  path: '/resolver/logos/{file}',
  summary:
    'A brand’s logo for the resolver page: a PNG this service re-encoded, by its SHA-256; immutable. Limited per client address.',
  tags: ['resolver'],
  auth: 'public',
  publicRateLimit: true,
  params: BrandLogoParam,
  responses: {
    200: { description: 'The logo', schema: Type.String({ contentEncoding: 'binary' }), contentType: 'image/png' },
  },
  errors: ['NOT_FOUND', 'RATE_LIMITED'],
});

export const brandThemeRoute = defineRoute({
  operationId: 'getBrandTheme',
  method: 'GET',
  path: '/resolver/themes/{file}',
  summary:
    'The stylesheet of a brand’s band on the resolver page: background and text colour from the name; a pair under 4.5:1 contrast is 404. Immutable.',
  tags: ['resolver'],
  auth: 'public',
  params: BrandThemeParam,
  responses: { 200: { description: 'The stylesheet', schema: Type.String(), contentType: 'text/css' } },
  errors: ['NOT_FOUND'],
});

/** Every HTTP route of the product. A route that is not here is not served. */
export const routes = [
  landingRoute,
  healthRoute,
  readyRoute,
  openApiRoute,
  pingServiceRoute,
  jwksRoute,
  createAccountRoute,
  getMyAccountRoute,
  listAccountsRoute,
  grantGtinRoute,
  listAccountGtinsRoute,
  claimGtinRoute,
  listGtinsRoute,
  revokeGtinClaimRoute,
  createKeyRoute,
  listKeysRoute,
  revokeKeyRoute,
  rotateSigningKeyRoute,
  ...keyRotationRoutes,
  generateCodeRoute,
  generateCodeBatchRoute,
  verifyCodeRoute,
  reportCodeRoute,
  listCodeReportsRoute,
  confirmCodeReportRoute,
  dismissCodeReportRoute,
  liftCodeReportRoute,
  codeQrRoute,
  createSchemaRoute,
  listSchemasRoute,
  getSchemaRoute,
  updateSchemaRoute,
  deleteSchemaRoute,
  validateMetadataRoute,
  verifyChainRoute,
  merkleRootRoute,
  merkleProofRoute,
  merkleConsistencyRoute,
  complianceExportRoute,
  getComplianceConfigRoute,
  updateComplianceConfigRoute,
  registerObjectRoute,
  uploadPhotoRoute,
  recordProvenanceEventRoute,
  publicVerifyObjectRoute,
  provenanceHistoryRoute,
  initiateTransferRoute,
  confirmTransferRoute,
  cancelTransferRoute,
  auctionDashboardRoute,
  resolverPageRoute,
  resolverOptionsRoute,
  resolverReportRoute,
  gs1ResolverDescriptionRoute,
  ...linkRoutes,
  ...scanRoutes,
  ...sessionRoutes,
  ...usageRoutes,
  ...codeListingRoutes,
  ...webhookRoutes,
  ...consoleRoutes,
  getBrandingRoute,
  updateBrandingRoute,
  uploadBrandingLogoRoute,
  deleteBrandingLogoRoute,
  brandLogoRoute,
  brandThemeRoute,
] as const;
