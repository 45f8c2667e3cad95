import { type Static, type TSchema, Type } from '@sinclair/typebox';
import {
  DashboardList,
  DashboardQuery,
  InitiateTransferBody,
  LabelStanding,
  PhotoUploaded,
  ProvenanceEventBody,
  ProvenanceHistory,
  PublicVerification,
  RecordedProvenanceEvent,
  RegisteredObject,
  RegisterObjectBody,
  TransferCancelled,
  TransferConfirmed,
  TransferInitiated,
} from './schemas/auction.ts';
import {
  CodeReport,
  CodeReportList,
  CodeReportView,
  DecideReportBody,
  GenerateBatchResult,
  GenerateCodeBody,
  GeneratedCode,
  ListCodeReportsQuery,
  QuickstartVerificationResult,
  ReportCodeBody,
  VerificationResult,
  VerifyCodeBody,
} from './schemas/codes.ts';
import {
  ChainVerification,
  ComplianceConfigPatch,
  ComplianceConfigView,
  ConsistencyProof,
  ExportPage,
  MerkleProof,
  MerkleRoot,
} from './schemas/compliance.ts';
import { GtinClaimInput, GtinClaimList, GtinClaimView, ListGtinClaimsQuery } from './schemas/gtins.ts';
import { EnvironmentSchema, VerificationKeyView } from './schemas/keys.ts';
import {
  CreateSchemaBody,
  ListSchemasQuery,
  SchemaList,
  SchemaView,
  UpdateSchemaBody,
  ValidationOutcome,
} from './schemas/metadata-schemas.ts';
import { ResolvedScan } from './schemas/resolver.ts';
import { PingRequest, PingResponse } from './schemas/system.ts';
import type { BackendService } from './services.ts';

/**
 * A request/reply operation a backend service answers over the bus. The subject is
 * `rpc.<service>.<operation>`; replicas of a service share it through the queue group `<service>`.
 */
export interface RpcDefinition<Req extends TSchema = TSchema, Res extends TSchema = TSchema> {
  service: BackendService;
  operation: string;
  request: Req;
  response: Res;
}

export type RpcRequest<D> = D extends RpcDefinition<infer Req, TSchema> ? Static<Req> : never;
export type RpcResponse<D> = D extends RpcDefinition<TSchema, infer Res> ? Static<Res> : never;

export function rpcSubject(definition: Pick<RpcDefinition, 'service' | 'operation'>): string {
  return `rpc.${definition.service}.${definition.operation}`;
}

export function pingRpc(service: BackendService): RpcDefinition<typeof PingRequest, typeof PingResponse> {
  return { service, operation: 'ping', request: PingRequest, response: PingResponse };
}

/** The caller as the gateway established it; every RPC that touches account data carries it. */
export const PrincipalSchema = Type.Object({ accountId: Type.String(), environment: EnvironmentSchema });

/** Who asked, for de-duplicating a client's repeated scans: the key and the client's address. */
export const ClientSchema = Type.Object({ keyId: Type.String(), address: Type.String() });

export const generateCodeRpc = {
  service: 'code-service',
  operation: 'generateCode',
  request: Type.Object({
    principal: PrincipalSchema,
    body: GenerateCodeBody,
    /** The request's Idempotency-Key as the gateway scopes it: the codes' asset ids are derived from it, so a retry whose first answer was lost finds its codes. */
    requestKey: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
  }),
  /** `madeBefore`: the code is one an earlier attempt with the same key stored, so its quota was spent then (the gateway gives this one's back). */
  response: Type.Intersect([GeneratedCode, Type.Object({ madeBefore: Type.Optional(Type.Literal(true)) })]),
} satisfies RpcDefinition;

/** A code as verification needs it. */
export const CodeLookup = Type.Object({
  assetId: Type.String(),
  accountId: Type.String(),
  kid: Type.String(),
  batch: Type.Union([Type.String(), Type.Null()]),
  expiry: Type.Union([Type.String(), Type.Null()]),
  expiresAt: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  metadata: Type.Record(Type.String(), Type.Unknown()),
});
export type CodeLookup = Static<typeof CodeLookup>;

/**
 * The codes of one item in one environment that its signer made: the account that owns the GTIN,
 * or, for a GTIN nobody owns, the operator's account (`signerAccountId`, null when there is none).
 * Another account's codes for the item are never answered.
 */
export const findCodesRpc = {
  service: 'code-service',
  operation: 'findCodes',
  request: Type.Object({ environment: EnvironmentSchema, gtin: Type.String(), serial: Type.String() }),
  response: Type.Object({ signerAccountId: Type.Union([Type.String(), Type.Null()]), codes: Type.Array(CodeLookup) }),
} satisfies RpcDefinition;

/**
 * The operator grants an account a GTIN or company prefix (`POST /accounts/{accountId}/gtins`), in
 * the principal's environment unless the input names one; a test principal never grants live.
 */
export const grantGtinRpc = {
  service: 'code-service',
  operation: 'grantGtin',
  request: Type.Object({ principal: PrincipalSchema, accountId: Type.String(), input: GtinClaimInput }),
  response: GtinClaimView,
} satisfies RpcDefinition;

/** An account claims a GTIN or company prefix itself (`POST /gtins`): test environment, when allowed. */
export const claimGtinRpc = {
  service: 'code-service',
  operation: 'claimGtin',
  request: Type.Object({ principal: PrincipalSchema, input: GtinClaimInput }),
  response: GtinClaimView,
} satisfies RpcDefinition;

/**
 * `accountId`'s claims as `principal` may see them: of its own environment, or, `asOperator` (the
 * caller holds accounts:write), of both environments with a live key and of test with a test key.
 */
export const listGtinClaimsRpc = {
  service: 'code-service',
  operation: 'listGtinClaims',
  request: Type.Object({
    principal: PrincipalSchema,
    accountId: Type.String(),
    query: ListGtinClaimsQuery,
    asOperator: Type.Boolean(),
  }),
  response: GtinClaimList,
} satisfies RpcDefinition;

/**
 * `asOperator`: the caller holds accounts:write and may revoke any account's claim (with a test key,
 * test claims only). Otherwise only the principal's own claims of its own environment, and of those
 * a claim others made for it (granted, registered, migrated: codes printed under it stop verifying)
 * only when `holdsAll`, the caller's key holds `*`; a narrower key gives up only its own self-service claims.
 */
export const revokeGtinClaimRpc = {
  service: 'code-service',
  operation: 'revokeGtinClaim',
  request: Type.Object({
    principal: PrincipalSchema,
    claimId: Type.String(),
    asOperator: Type.Boolean(),
    holdsAll: Type.Optional(Type.Boolean()),
  }),
  response: GtinClaimView,
} satisfies RpcDefinition;

/** Up to 500 items of a batch; the gateway splits larger batches. `firstIndex` numbers the results. */
export const generateCodesRpc = {
  service: 'code-service',
  operation: 'generateCodes',
  request: Type.Object({
    principal: PrincipalSchema,
    items: Type.Array(Type.Unknown(), { maxItems: 500 }),
    firstIndex: Type.Integer({ minimum: 0 }),
    /** The request's Idempotency-Key as the gateway scopes it: the codes' asset ids are derived from it, so a retry whose first answer was lost finds its codes. */
    requestKey: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
  }),
  /** `madeBefore`: how many of `results` are codes an earlier attempt with the same key stored, whose quota was spent then. */
  response: Type.Object({
    results: GenerateBatchResult.properties.results,
    madeBefore: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
} satisfies RpcDefinition;

export const renderQrRpc = {
  service: 'code-service',
  operation: 'renderQr',
  request: Type.Object({
    url: Type.String(),
    format: Type.Union([Type.Literal('svg'), Type.Literal('png')]),
    size: Type.Optional(Type.Integer()),
    mm: Type.Optional(Type.Number()),
    dpi: Type.Optional(Type.Integer()),
    /** The asking account: its renders wait in a share of the queue of their own. Optional for an older gateway. */
    owner: Type.Optional(Type.String()),
  }),
  response: Type.Object({
    contentType: Type.String(),
    body: Type.String(),
    encoding: Type.Union([Type.Literal('utf8'), Type.Literal('base64')]),
  }),
} satisfies RpcDefinition;

export const verifyCodeRpc = {
  service: 'verify-service',
  operation: 'verifyCode',
  request: Type.Object({
    principal: PrincipalSchema,
    client: ClientSchema,
    body: VerifyCodeBody,
    view: Type.Union([Type.Literal('full'), Type.Literal('quickstart')]),
  }),
  response: Type.Union([VerificationResult, QuickstartVerificationResult]),
} satisfies RpcDefinition;

export const reportCodeRpc = {
  service: 'verify-service',
  operation: 'reportCode',
  request: Type.Object({ principal: PrincipalSchema, client: ClientSchema, body: ReportCodeBody }),
  response: CodeReport,
} satisfies RpcDefinition;

/** The review queue of the principal's codes. */
export const listCodeReportsRpc = {
  service: 'verify-service',
  operation: 'listCodeReports',
  request: Type.Object({ principal: PrincipalSchema, query: ListCodeReportsQuery }),
  response: CodeReportList,
} satisfies RpcDefinition;

/**
 * Confirm (blocks the code) or dismiss a pending report of one of the principal's codes, or lift
 * the block of a confirmed one.
 */
export const decideCodeReportRpc = {
  service: 'verify-service',
  operation: 'decideCodeReport',
  request: Type.Object({
    principal: PrincipalSchema,
    client: ClientSchema,
    reportId: Type.String({ maxLength: 100 }),
    decision: Type.Union([Type.Literal('confirm'), Type.Literal('dismiss'), Type.Literal('lift')]),
    body: DecideReportBody,
  }),
  response: CodeReportView,
} satisfies RpcDefinition;

export const rotateSigningKeyRpc = {
  service: 'code-service',
  operation: 'rotateSigningKey',
  request: Type.Object({ principal: PrincipalSchema }),
  response: VerificationKeyView,
} satisfies RpcDefinition;

/** Metadata schemas live in code-service, which validates metadata at generation. */
export const createSchemaRpc = {
  service: 'code-service',
  operation: 'createSchema',
  request: Type.Object({ principal: PrincipalSchema, body: CreateSchemaBody }),
  response: SchemaView,
} satisfies RpcDefinition;

export const listSchemasRpc = {
  service: 'code-service',
  operation: 'listSchemas',
  request: Type.Object({ principal: PrincipalSchema, query: ListSchemasQuery }),
  response: SchemaList,
} satisfies RpcDefinition;

export const getSchemaRpc = {
  service: 'code-service',
  operation: 'getSchema',
  request: Type.Object({ principal: PrincipalSchema, id: Type.String(), version: Type.Optional(Type.Integer()) }),
  response: SchemaView,
} satisfies RpcDefinition;

export const updateSchemaRpc = {
  service: 'code-service',
  operation: 'updateSchema',
  request: Type.Object({ principal: PrincipalSchema, id: Type.String(), body: UpdateSchemaBody }),
  response: SchemaView,
} satisfies RpcDefinition;

export const deleteSchemaRpc = {
  service: 'code-service',
  operation: 'deleteSchema',
  request: Type.Object({ principal: PrincipalSchema, id: Type.String() }),
  response: Type.Object({ deleted: Type.Literal(true) }),
} satisfies RpcDefinition;

export const validateMetadataRpc = {
  service: 'code-service',
  operation: 'validateMetadata',
  request: Type.Object({
    principal: PrincipalSchema,
    id: Type.String(),
    version: Type.Optional(Type.Integer()),
    data: Type.Unknown(),
  }),
  response: ValidationOutcome,
} satisfies RpcDefinition;

const AssetRequest = Type.Object({ principal: PrincipalSchema, assetId: Type.String() });

export const verifyChainRpc = {
  service: 'compliance-service',
  operation: 'verifyChain',
  request: AssetRequest,
  response: ChainVerification,
} satisfies RpcDefinition;

export const merkleRootRpc = {
  service: 'compliance-service',
  operation: 'merkleRoot',
  request: AssetRequest,
  response: MerkleRoot,
} satisfies RpcDefinition;

export const merkleProofRpc = {
  service: 'compliance-service',
  operation: 'merkleProof',
  request: Type.Object({ principal: PrincipalSchema, assetId: Type.String(), eventId: Type.String() }),
  response: MerkleProof,
} satisfies RpcDefinition;

export const merkleConsistencyRpc = {
  service: 'compliance-service',
  operation: 'merkleConsistency',
  request: Type.Object({
    principal: PrincipalSchema,
    assetId: Type.String(),
    from: Type.Integer(),
    to: Type.Optional(Type.Integer()),
  }),
  response: ConsistencyProof,
} satisfies RpcDefinition;

/** A page of an export: the first call (no treeSize) fixes the tree size and carries the signed checkpoint. */
export const exportPageRpc = {
  service: 'compliance-service',
  operation: 'exportPage',
  request: Type.Object({
    principal: PrincipalSchema,
    assetId: Type.String(),
    treeSize: Type.Optional(Type.Integer({ minimum: 0 })),
    fromLeafIndex: Type.Integer({ minimum: 0 }),
  }),
  response: ExportPage,
} satisfies RpcDefinition;

export const getComplianceConfigRpc = {
  service: 'compliance-service',
  operation: 'getConfig',
  request: Type.Object({ principal: PrincipalSchema }),
  response: ComplianceConfigView,
} satisfies RpcDefinition;

export const updateComplianceConfigRpc = {
  service: 'compliance-service',
  operation: 'updateConfig',
  request: Type.Object({ principal: PrincipalSchema, patch: ComplianceConfigPatch }),
  response: ComplianceConfigView,
} satisfies RpcDefinition;

export const registerObjectRpc = {
  service: 'auction-service',
  operation: 'registerObject',
  request: Type.Object({
    principal: PrincipalSchema,
    body: RegisterObjectBody,
    /** The request's Idempotency-Key as the gateway scopes it: the object's id and serial are derived from it. */
    requestKey: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
  }),
  /** `madeBefore`: the object is one an earlier attempt with the same key registered, so its quota was spent then. */
  response: Type.Intersect([RegisteredObject, Type.Object({ madeBefore: Type.Optional(Type.Literal(true)) })]),
} satisfies RpcDefinition;

/** The gateway stored the photo's bytes in the blob store under their SHA-256; the service checks and binds them. */
export const bindPhotoRpc = {
  service: 'auction-service',
  operation: 'bindPhoto',
  request: Type.Object({
    principal: PrincipalSchema,
    objectId: Type.String(),
    angle: Type.String(),
    sha256: Type.String(),
    /** The request's Idempotency-Key as the gateway scopes it: the `photographed` event's id is derived from it. */
    requestKey: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
  }),
  response: PhotoUploaded,
} satisfies RpcDefinition;

export const recordProvenanceEventRpc = {
  service: 'auction-service',
  operation: 'recordProvenanceEvent',
  request: Type.Object({
    principal: PrincipalSchema,
    body: ProvenanceEventBody,
    /**
     * The request's Idempotency-Key, as the gateway scopes it (a hash of account, environment,
     * operation and key): the event's id is derived from it, so a retry whose first answer was lost
     * after the event was stored finds that event instead of storing another.
     */
    requestKey: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
  }),
  response: RecordedProvenanceEvent,
} satisfies RpcDefinition;

export const publicVerifyObjectRpc = {
  service: 'auction-service',
  operation: 'publicVerify',
  request: Type.Object({
    serial: Type.String(),
    presentedSignature: Type.Optional(Type.String({ description: 'the `sig` of a scanned link, which must be the issued one' })),
    presentedGtin: Type.Optional(Type.String({ description: 'the `01` of a scanned link, which must be the object’s' })),
    presentedBatch: Type.Optional(
      Type.String({ description: 'the `10` of a scanned link, which must be the object’s category' }),
    ),
  }),
  response: PublicVerification,
} satisfies RpcDefinition;

export const provenanceHistoryRpc = {
  service: 'auction-service',
  operation: 'provenanceHistory',
  request: Type.Object({ principal: PrincipalSchema, serial: Type.String() }),
  response: ProvenanceHistory,
} satisfies RpcDefinition;

export const initiateTransferRpc = {
  service: 'auction-service',
  operation: 'initiateTransfer',
  request: Type.Object({
    principal: PrincipalSchema,
    body: InitiateTransferBody,
    /** The request's Idempotency-Key as the gateway scopes it: the transfer's id is derived from it (see recordProvenanceEventRpc). */
    requestKey: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
  }),
  response: TransferInitiated,
} satisfies RpcDefinition;

export const confirmTransferRpc = {
  service: 'auction-service',
  operation: 'confirmTransfer',
  request: Type.Object({
    principal: PrincipalSchema,
    transferId: Type.String(),
    transferCode: Type.String(),
    /** The request's Idempotency-Key as the gateway scopes it: the sale's `transferred` event id is derived from it, so a retry finds its sale. */
    requestKey: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
  }),
  response: TransferConfirmed,
} satisfies RpcDefinition;

export const cancelTransferRpc = {
  service: 'auction-service',
  operation: 'cancelTransfer',
  request: Type.Object({ principal: PrincipalSchema, transferId: Type.String() }),
  response: TransferCancelled,
} satisfies RpcDefinition;

export const auctionDashboardRpc = {
  service: 'auction-service',
  operation: 'dashboard',
  request: Type.Object({ principal: PrincipalSchema, query: DashboardQuery }),
  response: DashboardList,
} satisfies RpcDefinition;

/** A scan on the public resolver: the code's owner is found from the code itself (live first, then test). */
export const resolveScanRpc = {
  service: 'verify-service',
  operation: 'resolveScan',
  request: Type.Object({ url: Type.String({ maxLength: 4096 }), client: Type.Object({ address: Type.String() }) }),
  response: ResolvedScan,
} satisfies RpcDefinition;

/**
 * What an auction object label's owner said of it (a block, a confirmed report), in live: the public
 * look-up by serial (GET /auction/public/verify/{serial}) shows it, though the look-up is no scan.
 */
export const objectLabelStandingRpc = {
  service: 'verify-service',
  operation: 'objectLabelStanding',
  request: Type.Object({ gtin: Type.String({ maxLength: 14 }), serial: Type.String({ maxLength: 64 }) }),
  response: LabelStanding,
} satisfies RpcDefinition;

/** A shopper's report from the resolver page: recorded for the brand to review; it does not flag the code by itself. */
export const publicReportRpc = {
  service: 'verify-service',
  operation: 'publicReport',
  request: Type.Object({ url: Type.String({ maxLength: 4096 }), reason: Type.Optional(Type.String({ maxLength: 1000 })) }),
  response: Type.Object({ recorded: Type.Boolean() }),
} satisfies RpcDefinition;
