import { type Static, Type } from '@sinclair/typebox';

const Hex32 = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256, lowercase hex' });

export const AssetIdParam = Type.Object({
  assetId: Type.String({
    minLength: 1,
    maxLength: 128,
    pattern: '^[A-Za-z0-9_-]+$',
    description: 'A code’s assetId, or an auction object’s id or service_serial',
  }),
});

export const MerkleAlgorithm = Type.Literal('RFC9162_SHA256');

export const SignedCheckpoint = Type.Object(
  {
    note: Type.String({
      description:
        'C2SP tlog-checkpoint signed note: origin, tree size and base64 root, the extension line `hallmark-signed-at <ISO 8601 time>`, then an Ed25519 signature line. Take the size, root and time from here, after verifying the signature, never from the unsigned fields. The service signs only the current tree: the time says when the tree was this size.',
    }),
    keyId: Type.String({ description: 'kid of the signing key in /.well-known/jwks.json' }),
    origin: Type.String(),
  },
  { description: 'A signed statement of the tree size and root' },
);

export const MerkleRoot = Type.Object({
  assetId: Type.String(),
  treeSize: Type.Integer({ minimum: 0 }),
  rootHash: Hex32,
  algorithm: MerkleAlgorithm,
  checkpoint: SignedCheckpoint,
});
export type MerkleRoot = Static<typeof MerkleRoot>;

export const MerkleProofQuery = Type.Object(
  { eventId: Type.String({ minLength: 1, maxLength: 128, description: 'The event to prove' }) },
  { additionalProperties: false },
);

export const MerkleProof = Type.Object({
  assetId: Type.String(),
  eventId: Type.String(),
  leafIndex: Type.Integer({ minimum: 0 }),
  treeSize: Type.Integer({ minimum: 1 }),
  leafHash: Hex32,
  rootHash: Hex32,
  auditPath: Type.Array(Hex32, { description: 'RFC 9162 inclusion proof, nearest the leaf first' }),
  algorithm: MerkleAlgorithm,
  checkpoint: SignedCheckpoint,
});
export type MerkleProof = Static<typeof MerkleProof>;

export const ConsistencyQuery = Type.Object(
  {
    // No asset's history comes near 2^31 events; the bound keeps a size exact wherever it goes (JS, SQL).
    from: Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'The earlier tree size' }),
    to: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'The later tree size; default the current one' }),
    ),
  },
  { additionalProperties: false },
);

export const ConsistencyProof = Type.Object({
  assetId: Type.String(),
  fromSize: Type.Integer(),
  toSize: Type.Integer(),
  fromRootHash: Hex32,
  toRootHash: Hex32,
  proof: Type.Array(Hex32, { description: 'RFC 9162 consistency proof' }),
  algorithm: MerkleAlgorithm,
  // Present when toSize is the current size: the service signs only its current tree (keep the
  // checkpoints you were given to vouch for an older size).
  checkpoint: Type.Optional(SignedCheckpoint),
});

export const ChainVerification = Type.Object({
  assetId: Type.String(),
  isValid: Type.Boolean(),
  eventCount: Type.Integer({ minimum: 0 }),
  headHash: Type.Union([Hex32, Type.Null()]),
  checkedAt: Type.String({ format: 'date-time' }),
  brokenAt: Type.Optional(
    Type.Object({
      sequence: Type.Integer({ description: '1 for the first event' }),
      eventId: Type.String(),
      reason: Type.String({ description: 'HASH_MISMATCH, PREV_HASH_MISMATCH, SEQUENCE_GAP, OWNER_MISMATCH or LOG_MISMATCH' }),
      message: Type.String(),
    }),
  ),
});
export type ChainVerification = Static<typeof ChainVerification>;

export const exportFormats = ['json', 'csv', 'epcis'] as const;
export const ExportQuery = Type.Object(
  {
    format: Type.Optional(
      Type.Union(
        exportFormats.map((format) => Type.Literal(format)),
        { description: 'json (default: the account’s defaultExportFormat), csv, or epcis (EPCIS 2.0 JSON-LD)' },
      ),
    ),
  },
  { additionalProperties: false },
);

/** The risk thresholds verification uses (docs/API.md, "Risk rules"). */
export const RiskThresholds = Type.Object(
  {
    maxScansPerWindow: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    scanWindowMinutes: Type.Integer({ minimum: 1, maximum: 10_080 }),
    repeatWindowSeconds: Type.Integer({ minimum: 0, maximum: 3_600 }),
    maxTravelKmh: Type.Integer({ minimum: 1, maximum: 100_000 }),
    clonedLabelClients: Type.Integer({ minimum: 2, maximum: 1_000_000 }),
    clonedLabelWindowMinutes: Type.Integer({ minimum: 1, maximum: 10_080 }),
  },
  { additionalProperties: false },
);

export const ComplianceConfig = Type.Object(
  {
    riskThresholds: RiskThresholds,
    retention: Type.Object(
      {
        scanHistoryDays: Type.Integer({
          minimum: 1,
          maximum: 3_650,
          description: 'How long scan history (the counters verification reads) is kept after an item’s last scan',
        }),
      },
      { additionalProperties: false },
    ),
    evidenceRequiredFor: Type.Array(Type.String({ pattern: '^[a-z_]{1,40}$' }), {
      maxItems: 50,
      uniqueItems: true,
      description: 'Provenance event types that must carry non-empty evidence',
    }),
    defaultExportFormat: Type.Union(exportFormats.map((format) => Type.Literal(format))),
  },
  { additionalProperties: false },
);
export type ComplianceConfig = Static<typeof ComplianceConfig>;

export const ComplianceConfigView = Type.Object({
  config: ComplianceConfig,
  version: Type.Integer({ minimum: 0, description: '0 until the first change' }),
  updatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
export type ComplianceConfigView = Static<typeof ComplianceConfigView>;

/** PATCH /compliance/config: any part of the config; objects merge, arrays and values replace. */
export const ComplianceConfigPatch = Type.Object(
  {
    riskThresholds: Type.Optional(Type.Partial(RiskThresholds, { additionalProperties: false })),
    retention: Type.Optional(Type.Partial(ComplianceConfig.properties.retention, { additionalProperties: false })),
    evidenceRequiredFor: Type.Optional(ComplianceConfig.properties.evidenceRequiredFor),
    defaultExportFormat: Type.Optional(ComplianceConfig.properties.defaultExportFormat),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type ComplianceConfigPatch = Static<typeof ComplianceConfigPatch>;

/** One event of an export: the chained record, its hashes and its proof against the export's checkpoint. */
export const ExportedEvent = Type.Object({
  eventId: Type.String(),
  sequence: Type.Integer(),
  type: Type.String(),
  occurredAt: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown()),
  prevHash: Type.Union([Hex32, Type.Null()]),
  hash: Hex32,
  leafIndex: Type.Integer(),
  leafHash: Hex32,
  auditPath: Type.Array(Hex32),
});
export type ExportedEvent = Static<typeof ExportedEvent>;

export const ComplianceExport = Type.Object({
  format: Type.Literal('hallmark.compliance-export/1'),
  assetId: Type.String(),
  owner: Type.Object({ accountId: Type.String(), environment: Type.String() }),
  exportedAt: Type.String({ format: 'date-time' }),
  treeSize: Type.Integer(),
  rootHash: Hex32,
  algorithm: MerkleAlgorithm,
  checkpoint: SignedCheckpoint,
  events: Type.Array(ExportedEvent),
});

/** One page of an export, as compliance-service hands it to the gateway, which streams the pages. */
export const ExportPage = Type.Object({
  assetId: Type.String(),
  owner: Type.Object({ accountId: Type.String(), environment: Type.String() }),
  treeSize: Type.Integer(),
  rootHash: Hex32,
  checkpoint: Type.Optional(SignedCheckpoint),
  events: Type.Array(ExportedEvent),
  nextLeafIndex: Type.Union([Type.Integer(), Type.Null()]),
});
export type ExportPage = Static<typeof ExportPage>;
