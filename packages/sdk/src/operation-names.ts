import type { OperationId } from './generated/operations.ts';

/**
 * Where each operation sits on the client: `hallmark.codes.verify(...)` calls `verifyCode`. This map is
 * the SDK's whole public surface of methods; `operation-names.unit.test.ts` fails when an operationId
 * of the OpenAPI document has no method here, so a new route cannot be forgotten (add it, in the area
 * of its path, and run `pnpm gen:sdk`).
 */
export const operationNames = {
  system: {
    landing: 'getLanding',
    health: 'getHealth',
    ready: 'getReady',
    openApi: 'getOpenApiDocument',
    ping: 'pingService',
  },
  accounts: {
    create: 'createAccount',
    list: 'listAccounts',
    me: 'getMyAccount',
    gtins: { grant: 'grantGtin', list: 'listAccountGtins' },
  },
  account: {
    branding: {
      get: 'getBranding',
      update: 'updateBranding',
      uploadLogo: 'uploadBrandingLogo',
      deleteLogo: 'deleteBrandingLogo',
    },
  },
  gtins: { claim: 'claimGtin', list: 'listGtins', revoke: 'revokeGtinClaim' },
  keys: {
    create: 'createKey',
    list: 'listKeys',
    revoke: 'revokeKey',
    rotate: 'rotateApiKey',
    jwks: 'getJwks',
    signing: { rotate: 'rotateSigningKey' },
  },
  codes: {
    list: 'listCodes',
    get: 'getCode',
    generate: 'generateCode',
    generateBatch: 'generateCodeBatch',
    verify: 'verifyCode',
    report: 'reportCode',
    qr: 'getCodeQr',
    reports: { list: 'listCodeReports', confirm: 'confirmCodeReport', dismiss: 'dismissCodeReport', lift: 'liftCodeReport' },
  },
  schemas: {
    create: 'createSchema',
    list: 'listSchemas',
    get: 'getSchema',
    update: 'updateSchema',
    delete: 'deleteSchema',
    validate: 'validateMetadata',
  },
  compliance: {
    verifyChain: 'verifyProvenanceChain',
    export: 'exportCompliance',
    merkle: { root: 'getMerkleRoot', proof: 'getMerkleProof', consistency: 'getMerkleConsistency' },
    config: { get: 'getComplianceConfig', update: 'updateComplianceConfig' },
  },
  auction: {
    objects: {
      register: 'registerAuctionObject',
      uploadPhoto: 'uploadAuctionPhoto',
      list: 'listAuctionObjects',
      provenance: 'getAuctionProvenance',
      publicVerify: 'publicVerifyAuctionObject',
    },
    provenance: { record: 'recordProvenanceEvent' },
    transfers: { initiate: 'initiateTransfer', confirm: 'confirmTransfer', cancel: 'cancelTransfer' },
  },
  links: {
    create: 'createLink',
    list: 'listLinks',
    update: 'updateLink',
    delete: 'deleteLink',
    removeMadeBy: 'removeLinksMadeBy',
  },
  scans: {
    list: 'listScans',
    aggregates: 'getScanAggregates',
    topCodes: 'getTopScannedCodes',
    countries: 'getScanCountries',
  },
  blocklist: {
    create: 'createBlock',
    createFromCsv: 'createBlocksFromCsv',
    list: 'listBlocks',
    delete: 'deleteBlock',
    removeMadeBy: 'removeBlocksMadeBy',
  },
  webhooks: {
    endpoints: {
      create: 'createWebhookEndpoint',
      list: 'listWebhookEndpoints',
      get: 'getWebhookEndpoint',
      update: 'updateWebhookEndpoint',
      delete: 'deleteWebhookEndpoint',
      disable: 'disableWebhookEndpoint',
      rotateSecret: 'rotateWebhookSecret',
      test: 'testWebhookEndpoint',
      replayFailed: 'replayFailedWebhookMessages',
    },
    messages: { list: 'listWebhookMessages', attempts: 'listWebhookAttempts', replay: 'replayWebhookMessage' },
  },
  usage: { get: 'getUsage', keys: 'listKeyUsage' },
  sessions: {
    create: 'createSession',
    current: { get: 'getCurrentSession', update: 'updateCurrentSession', delete: 'deleteCurrentSession' },
  },
  console: { page: 'getConsole', file: 'getConsoleFile' },
  resolver: {
    resolve: 'resolveCode',
    resolveOptions: 'resolverOptions',
    resolveCompressed: 'resolveCompressedLink',
    resolveCompressedOptions: 'resolveCompressedLinkOptions',
    verificationPage: 'verificationPage',
    verificationPageOptions: 'verificationPageOptions',
    report: 'reportFromResolver',
    description: 'getGs1ResolverDescription',
    logo: 'getBrandLogo',
    theme: 'getBrandTheme',
  },
} as const satisfies OperationTree;

export interface OperationTree {
  readonly [name: string]: OperationId | OperationTree;
}

/** Every method of the map as its dotted name and operationId (`codes.verify` → `verifyCode`). */
export function methodsOf(tree: OperationTree = operationNames, prefix = ''): { name: string; operationId: OperationId }[] {
  return Object.entries(tree).flatMap(([name, entry]) =>
    typeof entry === 'string' ? [{ name: `${prefix}${name}`, operationId: entry }] : methodsOf(entry, `${prefix}${name}.`),
  );
}
