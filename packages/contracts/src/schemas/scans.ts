import { type Static, Type } from '@sinclair/typebox';
import { RiskIndicator, Verdict } from './codes.ts';
import { Pagination, RemovalByCreatorQuery, RemovedByCreator } from './common.ts';

// The scans API and the blocklist (issue #21; docs/API.md, "Scans" and "Blocklist").

const Timestamp = Type.String({ format: 'date-time' });
const Gtin = Type.String({ pattern: '^[0-9]{14}$', description: 'a GTIN-14 (AI 01)' });
const Serial = Type.String({ minLength: 1, maxLength: 20, description: 'a serial (AI 21)' });
const Country = Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2, as the scanning client sent it' });

/** Rows a page holds at most; a larger `limit` is taken as this. */
export const maxScansPageSize = 1000;

const Limit = (fallback: number, most: number) =>
  Type.Integer({
    minimum: 1,
    // A number, not Infinity (`limit=1e309`), which passed as an integer and was refused by
    // verify-service in its own words; any larger value is still taken as `most`.
    maximum: Number.MAX_SAFE_INTEGER,
    default: fallback,
    description: `rows per page, ${fallback} by default; more than ${most} is taken as ${most}`,
  });

/**
 * Who asked for a scan's verification: the code owner's own API keys, the public verification page
 * (a shopper), or another account's key (a retailer, a partner, or a rival: its location and country
 * are its word).
 */
export const ScannedBy = Type.Union([Type.Literal('owner'), Type.Literal('public'), Type.Literal('other')], {
  description:
    'owner: one of your API keys; public: the public verification page (a shopper); other: another account’s key (a partner or a rival: its location is its word). Scans before 2026-12-05 made on the page are counted as owner',
});
export type ScannedBy = Static<typeof ScannedBy>;

export const ScanFilters = {
  from: Type.Optional(Type.String({ maxLength: 40, description: 'scanned at or after (ISO 8601 date-time)' })),
  to: Type.Optional(Type.String({ maxLength: 40, description: 'scanned before (ISO 8601 date-time)' })),
  verdict: Type.Optional(Verdict),
  flag: Type.Optional(RiskIndicator),
  gtin: Type.Optional(Gtin),
  serial: Type.Optional(Serial),
  batch: Type.Optional(Type.String({ minLength: 1, maxLength: 20, description: 'a batch or lot (AI 10)' })),
  country: Type.Optional(Country),
  reported: Type.Optional(
    Type.Boolean({ description: 'true: only scans of codes with a report in the owner’s queue; false: only the others' }),
  ),
  scannedBy: Type.Optional(ScannedBy),
};

export const ListScansQuery = Type.Object(
  {
    ...ScanFilters,
    limit: Type.Optional(Limit(50, maxScansPageSize)),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('csv')], {
        description:
          'csv: every matching scan as text/csv, streamed (as `Accept: text/csv`); with `cursor`, those after it; `limit` does not apply',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListScansQuery = Static<typeof ListScansQuery>;

export const ScanView = Type.Object({
  scanId: Type.String(),
  scannedAt: Timestamp,
  gtin: Type.String(),
  serial: Type.String(),
  batch: Type.Union([Type.String(), Type.Null()]),
  verdict: Verdict,
  riskIndicators: Type.Array(RiskIndicator),
  scanNumber: Type.Integer(),
  location: Type.Union([Type.Object({ latitude: Type.Number(), longitude: Type.Number() }), Type.Null()]),
  country: Type.Union([Country, Type.Null()]),
  reported: Type.Boolean({ description: 'the code has a report in its owner’s queue (any status)' }),
  scannedBy: ScannedBy,
  travelKm: Type.Union([Type.Number(), Type.Null()], {
    description:
      'kilometres from the code’s previous scan with a location to this one (what GEOGRAPHIC_IMPOSSIBILITY judges); null when either has none',
  }),
  travelKmh: Type.Union([Type.Number(), Type.Null()], {
    description: 'the speed of that journey in km/h; null without one, or when no time passed between the two scans',
  }),
});
export type ScanView = Static<typeof ScanView>;

export const ScanList = Type.Object({ scans: Type.Array(ScanView), pagination: Pagination });
export type ScanList = Static<typeof ScanList>;

// Checked by the handlers (an RPC request's schema knows no string formats).
const Range = {
  from: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 date-time' })),
  to: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 date-time' })),
};

export const ScanAggregatesQuery = Type.Object(
  {
    groupBy: Type.Union([Type.Literal('verdict'), Type.Literal('flag'), Type.Literal('country')]),
    bucket: Type.Optional(Type.Union([Type.Literal('hour'), Type.Literal('day')], { default: 'day' })),
    ...Range,
  },
  { additionalProperties: false },
);
export type ScanAggregatesQuery = Static<typeof ScanAggregatesQuery>;

export const ScanAggregates = Type.Object({
  groupBy: Type.String(),
  bucket: Type.String(),
  from: Timestamp,
  to: Timestamp,
  buckets: Type.Array(
    Type.Object({
      start: Timestamp,
      counts: Type.Record(Type.String(), Type.Integer(), {
        description: 'scans by verdict, flag or country; zero counts left out',
      }),
    }),
    { description: 'one per hour or day of the range that has scans, oldest first' },
  ),
});
export type ScanAggregates = Static<typeof ScanAggregates>;

export const TopCodesQuery = Type.Object(
  {
    ...Range,
    limit: Type.Optional(Limit(10, 100)),
    verdict: Type.Optional(
      Type.Union([Type.Literal('SUSPICIOUS'), Type.Literal('COUNTERFEIT')], {
        description:
          'rank by this verdict’s scans alone, codes without any left out (default: SUSPICIOUS and COUNTERFEIT together). A SUSPICIOUS scan needs a valid signature, a COUNTERFEIT one anyone can forge for a made-up serial: SUSPICIOUS finds a cloned code however many forged serials are scanned',
      }),
    ),
  },
  { additionalProperties: false },
);
export type TopCodesQuery = Static<typeof TopCodesQuery>;

export const TopCodes = Type.Object({
  from: Timestamp,
  to: Timestamp,
  codes: Type.Array(
    Type.Object({
      gtin: Type.String(),
      serial: Type.String(),
      suspicious: Type.Integer(),
      counterfeit: Type.Integer(),
      lastScannedAt: Timestamp,
    }),
  ),
});
export type TopCodes = Static<typeof TopCodes>;

export const ScanCountriesQuery = Type.Object({ ...Range }, { additionalProperties: false });
export type ScanCountriesQuery = Static<typeof ScanCountriesQuery>;

export const ScanCountries = Type.Object({
  from: Timestamp,
  to: Timestamp,
  countries: Type.Array(Type.Object({ country: Country, scans: Type.Integer() }), { description: 'most scans first' }),
});
export type ScanCountries = Static<typeof ScanCountries>;

// The blocklist.

export const BlockKind = Type.Union([Type.Literal('counterfeit'), Type.Literal('withdrawn')], {
  description: 'counterfeit: verifications answer COUNTERFEIT; withdrawn: SUSPICIOUS. Both with KNOWN_COUNTERFEIT_PATTERN.',
});
export type BlockKind = Static<typeof BlockKind>;

export const CreateBlockBody = Type.Object(
  {
    gtin: Gtin,
    serial: Type.Optional(Serial),
    serialFrom: Type.Optional(Serial),
    serialTo: Type.Optional(Serial),
    kind: BlockKind,
    reason: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);
export type CreateBlockBody = Static<typeof CreateBlockBody>;

export const BlockView = Type.Object({
  blockId: Type.String(),
  gtin: Type.String(),
  serialFrom: Type.String(),
  serialTo: Type.String(),
  kind: BlockKind,
  reason: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([Type.Literal('active'), Type.Literal('removed')]),
  createdAt: Timestamp,
  removedAt: Type.Union([Timestamp, Type.Null()]),
  createdBy: Type.Optional(
    Type.String({
      description:
        'the id of the API key that made the block. After a key leaks, `GET /blocklist?createdBy=<its id>` lists the blocks it made, to remove them. Absent only from a bulk chunk’s answer replayed from before 2026-12-07',
    }),
  ),
});
export type BlockView = Static<typeof BlockView>;

export const BlockList = Type.Object({ blocks: Type.Array(BlockView), pagination: Pagination });
export type BlockList = Static<typeof BlockList>;

export const ListBlocksQuery = Type.Object(
  {
    gtin: Type.Optional(Gtin),
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('removed')])),
    createdBy: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'only the blocks this API key made (after a leak: what to remove)',
      }),
    ),
    limit: Type.Optional(Limit(20, 100)),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type ListBlocksQuery = Static<typeof ListBlocksQuery>;

export const BlockIdParam = Type.Object({ blockId: Type.String({ minLength: 1, maxLength: 100 }) });

/** DELETE /blocklist?createdBy=: the key whose active blocks are removed, and how many were. */
export const RemoveBlocksQuery = RemovalByCreatorQuery('active blocks');
export const RemovedBlocks = RemovedByCreator('active blocks');

export const BulkBlockResult = Type.Object({
  results: Type.Array(
    Type.Union([
      Type.Object({ line: Type.Integer(), block: BlockView }),
      Type.Object({ line: Type.Integer(), error: Type.Object({ code: Type.String(), message: Type.String() }) }),
    ]),
    { description: 'one per data line of the CSV, in order; `line` counts from 1 at the header' },
  ),
});
export type BulkBlockResult = Static<typeof BulkBlockResult>;
