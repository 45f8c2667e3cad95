import { type Static, Type } from '@sinclair/typebox';
import { Pagination } from './common.ts';

const Timestamp = Type.String({ format: 'date-time' });

/**
 * POST /code/generate. gtin and serialNumber are required, but checked by the service rather than
 * the schema, so that their absence answers the spec's MISSING_REQUIRED_FIELD and a bad GTIN its
 * INVALID_GTIN.
 */
export const GenerateCodeBody = Type.Object(
  {
    // No maxLength: a GTIN of any length that is not 14 digits is the spec's INVALID_GTIN (the body's
    // size bounds it), not a VALIDATION_ERROR of the schema.
    gtin: Type.Optional(Type.String({ description: 'GTIN-14: 14 digits with a valid GS1 check digit (required)' })),
    serialNumber: Type.Optional(
      Type.String({ maxLength: 64, description: 'AI 21: 1–20 characters of GS1 set 82, unique per GTIN (required)' }),
    ),
    batchNumber: Type.Optional(Type.String({ maxLength: 64, description: 'AI 10: 1–20 characters of GS1 set 82' })),
    expiryDate: Type.Optional(
      Type.String({ maxLength: 40, description: 'ISO 8601 date or date-time; written as AI 17 (YYMMDD, UTC)' }),
    ),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'free key-value data, e.g. name' })),
    schemaId: Type.Optional(
      Type.String({ maxLength: 100, description: 'validate metadata against this schema (POST /schemas)' }),
    ),
    schemaVersion: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'a version of schemaId; its current one by default' }),
    ),
  },
  { additionalProperties: false },
);
export type GenerateCodeBody = Static<typeof GenerateCodeBody>;

export const GeneratedCode = Type.Object({
  url: Type.String(),
  gtin: Type.String(),
  serial: Type.String(),
  batch: Type.Optional(Type.String()),
  expiryDate: Type.Optional(Type.String({ description: 'YYYY-MM-DD, when the code has an expiry' })),
  signature: Type.String({ description: 'base64url Ed25519 signature' }),
  keyId: Type.String(),
  assetId: Type.String({ description: 'the code as a compliance asset' }),
  createdAt: Timestamp,
  expiresAt: Type.Union([Timestamp, Type.Null()], { description: 'when verification starts answering EXPIRED_CODE' }),
});
export type GeneratedCode = Static<typeof GeneratedCode>;

/** POST /code/generate/batch. Items are checked one by one by the service, so one bad item fails only itself. */
export const GenerateBatchBody = Type.Object(
  {
    items: Type.Array(Type.Unknown({ description: 'a POST /code/generate body' }), { minItems: 1, maxItems: 10_000 }),
  },
  { additionalProperties: false },
);
export type GenerateBatchBody = Static<typeof GenerateBatchBody>;

export const BatchItemError = Type.Object({
  code: Type.String(),
  message: Type.String(),
  details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

export const BatchItemResult = Type.Union([
  Type.Object({ index: Type.Integer(), code: GeneratedCode }),
  Type.Object({ index: Type.Integer(), error: BatchItemError }),
]);
export type BatchItemResult = Static<typeof BatchItemResult>;

export const GenerateBatchResult = Type.Object({ results: Type.Array(BatchItemResult) });
export type GenerateBatchResult = Static<typeof GenerateBatchResult>;

export const Location = Type.Object(
  {
    latitude: Type.Number({ minimum: -90, maximum: 90 }),
    longitude: Type.Number({ minimum: -180, maximum: 180 }),
    country: Type.Optional(
      Type.String({
        pattern: '^[A-Z]{2}$',
        description: 'ISO 3166-1 alpha-2 where the scan happened, if the client knows it (scan analytics)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type Location = Static<typeof Location>;

export const VerifyCodeBody = Type.Object(
  {
    url: Type.Optional(Type.String({ maxLength: 2048, description: 'the complete GS1 Digital Link URL' })),
    content: Type.Optional(Type.String({ maxLength: 2048, description: 'raw QR content' })),
    location: Type.Optional(Location),
  },
  { additionalProperties: false },
);
export type VerifyCodeBody = Static<typeof VerifyCodeBody>;

export const VerifyCodeQuery = Type.Object(
  { view: Type.Optional(Type.Union([Type.Literal('full'), Type.Literal('quickstart')])) },
  { additionalProperties: false },
);

export const Verdict = Type.Union([Type.Literal('AUTHENTIC'), Type.Literal('COUNTERFEIT'), Type.Literal('SUSPICIOUS')]);
export type Verdict = Static<typeof Verdict>;

export const RiskLevel = Type.Union([
  Type.Literal('low'),
  Type.Literal('medium'),
  Type.Literal('high'),
  Type.Literal('critical'),
]);
export type RiskLevel = Static<typeof RiskLevel>;

export const RiskIndicator = Type.Union([
  Type.Literal('EXCESSIVE_SCANS'),
  Type.Literal('GEOGRAPHIC_IMPOSSIBILITY'),
  Type.Literal('KNOWN_COUNTERFEIT_PATTERN'),
  Type.Literal('EXPIRED_CODE'),
]);
export type RiskIndicator = Static<typeof RiskIndicator>;

const SignatureCheck = Type.Object({ passed: Type.Boolean(), keyId: Type.String(), algorithm: Type.Literal('Ed25519') });
const FormatCheck = Type.Object({ passed: Type.Boolean(), standard: Type.Literal('GS1_DIGITAL_LINK') });
const ScanPatternCheck = Type.Object({ passed: Type.Boolean(), scanNumber: Type.Integer(), riskLevel: RiskLevel });

/** The code's owner confirmed a report of it (POST /code/reports/{reportId}/confirm): the code is blocked. */
export const ConfirmedReport = Type.Object({
  reason: Type.Union([Type.String(), Type.Null()], {
    description: 'why, in the owner’s words; null when the owner gave none (a reporter’s words are never shown)',
  }),
  confirmedAt: Timestamp,
});
export type ConfirmedReport = Static<typeof ConfirmedReport>;

/** The code is on its owner's blocklist (POST /blocklist): counterfeit answers COUNTERFEIT, withdrawn SUSPICIOUS. */
export const BlockedCode = Type.Object({
  blockId: Type.Optional(Type.String({ description: 'answered to the code owner’s keys only' })),
  kind: Type.Union([Type.Literal('counterfeit'), Type.Literal('withdrawn')]),
  reason: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description:
        'the owner’s words (null: none given), answered to the code owner’s keys only: other accounts and the public resolver see the kind and time',
    }),
  ),
  blockedAt: Timestamp,
});
export type BlockedCode = Static<typeof BlockedCode>;

/** What a block says to anyone but the code's owner (another account's key, the public resolver): its kind and time. */
export function blockSeenByOthers(block: BlockedCode): BlockedCode {
  return { kind: block.kind, blockedAt: block.blockedAt };
}

/** The fields both views of a verification share. */
const verdictFields = {
  verdict: Verdict,
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
  gtin: Type.String(),
  serial: Type.String(),
  batch: Type.Optional(Type.String()),
  confirmedReport: Type.Optional(ConfirmedReport),
  blocked: Type.Optional(BlockedCode),
};

export const VerificationResult = Type.Object({
  ...verdictFields,
  checks: Type.Object({ signature: SignatureCheck, format: FormatCheck, scanPattern: ScanPatternCheck }),
  metadata: Type.Object({ firstSeen: Timestamp, lastSeen: Timestamp, totalScans: Type.Integer() }),
  riskIndicators: Type.Array(RiskIndicator),
});
export type VerificationResult = Static<typeof VerificationResult>;

/** `?view=quickstart`: scanNumber and firstSeen at the top, no metadata, no scanPattern check. */
export const QuickstartVerificationResult = Type.Object({
  ...verdictFields,
  checks: Type.Object({ signature: SignatureCheck, format: FormatCheck }),
  scanNumber: Type.Integer(),
  firstSeen: Timestamp,
  riskIndicators: Type.Array(RiskIndicator),
});
export type QuickstartVerificationResult = Static<typeof QuickstartVerificationResult>;

export const QrQuery = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'the code’s GS1 Digital Link' }),
    format: Type.Optional(Type.Union([Type.Literal('svg'), Type.Literal('png')], { default: 'svg' })),
    size: Type.Optional(Type.Integer({ minimum: 64, maximum: 4096, description: 'width in pixels (at most 4096)' })),
    mm: Type.Optional(
      Type.Number({
        minimum: 10,
        maximum: 500,
        description: 'printed width in millimetres (png; with dpi); mm × dpi / 25.4 must be at most 4096 pixels, else 400',
      }),
    ),
    dpi: Type.Optional(
      Type.Integer({ minimum: 72, maximum: 2400, description: 'print resolution (png), recorded in the file; default 300' }),
    ),
  },
  { additionalProperties: false },
);
export type QrQuery = Static<typeof QrQuery>;

export const ReportCodeBody = Type.Object(
  {
    url: Type.Optional(Type.String({ maxLength: 2048 })),
    content: Type.Optional(Type.String({ maxLength: 2048 })),
    reason: Type.Optional(Type.String({ maxLength: 1000, description: 'what the reporter saw' })),
  },
  { additionalProperties: false },
);
export type ReportCodeBody = Static<typeof ReportCodeBody>;

export const CodeReport = Type.Object({
  reportId: Type.String(),
  gtin: Type.String(),
  serial: Type.String(),
  status: Type.Literal('pending', { description: 'waiting in the code owner’s review queue; it changes no verdict' }),
  reportedAt: Timestamp,
});
export type CodeReport = Static<typeof CodeReport>;

export const ReportStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('confirmed'),
  Type.Literal('dismissed'),
  Type.Literal('lifted'),
]);
export type ReportStatus = Static<typeof ReportStatus>;

/** A report in its code owner's review queue. */
export const CodeReportView = Type.Object({
  reportId: Type.String(),
  status: ReportStatus,
  source: Type.Union([Type.Literal('api'), Type.Literal('resolver')], {
    description: 'api: POST /code/report by any account; resolver: the public page’s form',
  }),
  gtin: Type.String(),
  serial: Type.String(),
  assetId: Type.String({ description: 'the reported code (its signature verified under this code’s key)' }),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'what the reporter wrote' }),
  reportedAt: Timestamp,
  decidedAt: Type.Union([Timestamp, Type.Null()]),
  blockReason: Type.Union([Type.String(), Type.Null()], {
    description:
      'confirmed: the reason verifications and the public page show: the owner’s, null when the owner gave none (the reporter’s words are never published)',
  }),
  liftedAt: Type.Union([Timestamp, Type.Null()], {
    description: 'lifted: when its owner lifted the block of this confirmed report (decidedAt stays the confirmation’s)',
  }),
  liftReason: Type.Union([Type.String(), Type.Null()], { description: 'lifted: why, as its owner wrote it' }),
  dismissReason: Type.Union([Type.String(), Type.Null()], {
    description: 'dismissed: why, as its owner wrote it; null when the owner gave none (shown only to the owner)',
  }),
});
export type CodeReportView = Static<typeof CodeReportView>;

export const ListCodeReportsQuery = Type.Object(
  {
    status: Type.Optional(ReportStatus),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type ListCodeReportsQuery = Static<typeof ListCodeReportsQuery>;

export const CodeReportList = Type.Object({ reports: Type.Array(CodeReportView), pagination: Pagination });
export type CodeReportList = Static<typeof CodeReportList>;

export const ReportIdParam = Type.Object({ reportId: Type.String({ minLength: 1, maxLength: 100 }) });

export const DecideReportBody = Type.Object(
  {
    reason: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description:
          'confirm: shown on verifications and the public page instead of the reporter’s words; dismiss and lift: kept in the record',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DecideReportBody = Static<typeof DecideReportBody>;
