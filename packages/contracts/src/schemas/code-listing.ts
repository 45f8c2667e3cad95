import { type Static, Type } from '@sinclair/typebox';
import { RiskIndicator } from './codes.ts';
import { Pagination } from './common.ts';

// The caller's codes, searched and one by one (docs/API.md, "Listing codes").

const Timestamp = Type.String({ format: 'date-time' });

/** Rows a page holds at most. */
export const maxCodesPageSize = 200;

export const ListCodesQuery = Type.Object(
  {
    gtin: Type.Optional(Type.String({ pattern: '^[0-9]{14}$', description: 'only codes of this GTIN-14' })),
    serial: Type.Optional(Type.String({ minLength: 1, maxLength: 20, description: 'only the code(s) with this serial (exact)' })),
    batch: Type.Optional(Type.String({ minLength: 1, maxLength: 20, description: 'only codes of this batch or lot (exact)' })),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: maxCodesPageSize,
        default: 50,
        description: `rows per page, at most ${maxCodesPageSize}`,
      }),
    ),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type ListCodesQuery = Static<typeof ListCodesQuery>;

export const CodeListItem = Type.Object({
  assetId: Type.String(),
  gtin: Type.String(),
  serialNumber: Type.String(),
  batchNumber: Type.Union([Type.String(), Type.Null()]),
  expiryDate: Type.Union([Type.String({ description: 'YYYY-MM-DD (AI 17)' }), Type.Null()]),
  url: Type.String({ description: 'the signed GS1 Digital Link' }),
  createdAt: Timestamp,
  metadata: Type.Record(Type.String(), Type.Unknown()),
});
export type CodeListItem = Static<typeof CodeListItem>;

export const CodeList = Type.Object({
  data: Type.Array(CodeListItem),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
  pagination: Pagination,
});
export type CodeList = Static<typeof CodeList>;

export const AssetIdParam = Type.Object({ assetId: Type.String({ minLength: 1, maxLength: 100 }) });

/** What verify-service knows of a code: its scans, reports and blocks. */
export const CodeStatus = Type.Object({
  scans: Type.Object({
    count: Type.Integer({ minimum: 0, description: 'every recorded scan of the code (forged links of it included)' }),
    firstAt: Type.Union([Timestamp, Type.Null()]),
    lastAt: Type.Union([Timestamp, Type.Null()]),
    flags: Type.Array(RiskIndicator, { description: 'every risk indicator any of its scans raised' }),
  }),
  reported: Type.Boolean({ description: 'the code has a report in the owner’s queue (any status)' }),
  reportStatus: Type.Optional(
    Type.Union(
      [Type.Literal('pending'), Type.Literal('confirmed'), Type.Literal('dismissed'), Type.Literal('lifted'), Type.Null()],
      { description: 'the status of the report that speaks for the code: a confirmed one, else the latest; null when none' },
    ),
  ),
  blocked: Type.Union(
    [
      Type.Object({
        blockId: Type.String({ description: 'the blocklist entry, or the confirmed report, that blocks it' }),
        status: Type.Literal('active'),
        kind: Type.Union([Type.Literal('counterfeit'), Type.Literal('withdrawn'), Type.Literal('report')], {
          description:
            'counterfeit or withdrawn: a blocklist entry (verifications answer COUNTERFEIT or SUSPICIOUS); report: a confirmed report (SUSPICIOUS)',
        }),
        reason: Type.Union([Type.String(), Type.Null()]),
        serialFrom: Type.Optional(
          Type.String({ description: 'a blocklist entry: the first serial it covers (removing it unblocks every one)' }),
        ),
        serialTo: Type.Optional(Type.String({ description: 'a blocklist entry: the last serial it covers' })),
      }),
      Type.Null(),
    ],
    { description: 'the active block covering the code (a blocklist entry or a confirmed report), or null' },
  ),
});
export type CodeStatus = Static<typeof CodeStatus>;

export const CodeDetail = Type.Composite([CodeListItem, CodeStatus]);
export type CodeDetail = Static<typeof CodeDetail>;
