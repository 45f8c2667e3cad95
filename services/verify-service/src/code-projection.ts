import type { CodeLookup, Environment } from '@hallmark/contracts';
import { createSqlProjection, type EventStore, type EventSubscription, type StoredEvent } from '@hallmark/event-store';
import { parseDigitalLink } from '@hallmark/gs1';
import { assetIdOfStream, chainedRecordOf } from '@hallmark/provenance';
import type { SqlDatabase, SqlExecutor } from '@hallmark/sql';

/**
 * One subscription of both event types below. Renamed from `verify-code-directory` when auction
 * objects joined the directory (2026-12-02): under the new name it replays the log once from the
 * first event, which puts the objects registered before it on record (rewriting the codes' rows as
 * they were); from then on it reads each page of the log once, for codes and objects alike.
 */
export const codeDirectoryProjectionName = 'verify-code-directory-2';

/** The event types the directory is made of: a code made, an auction object registered. */
const codeGenerated = 'code.generated';
const objectRegistered = 'registered';

/** A row of `code_directory`: what verification needs of one code, nothing more. */
export interface CodeDirectoryRow {
  asset_id: string;
  account_id: string;
  environment: Environment;
  gtin: string;
  serial: string;
  batch: string | null;
  expiry: string | null;
  kid: string;
  product_name: string | null;
  expires_at: string | null;
  created_at: string;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The asset and chain fields of an event of `type` in a stream of `asset-<idPrefix>…`, else undefined. */
function chainedAssetOf(event: StoredEvent, type: string, idPrefix: string) {
  if (event.type !== type) return undefined;
  const assetId = assetIdOfStream(event.streamId);
  const record = chainedRecordOf(event);
  return assetId?.startsWith(idPrefix) && record ? { assetId, record } : undefined;
}

/**
 * The row a `code.generated` event makes, or undefined for any other event. The owner and the
 * environment are the chain's (`metadata.provenance`, packages/provenance), the rest the event's data;
 * the expiry is read from the signed link itself (its YYMMDD, as the signature covers it).
 */
export function codeRowOf(event: StoredEvent): CodeDirectoryRow | undefined {
  const asset = chainedAssetOf(event, codeGenerated, 'code_');
  if (!asset) return undefined;
  const { assetId, record } = asset;
  const { data } = event;
  const gtin = text(data.gtin);
  const serial = text(data.serial);
  const kid = text(data.keyId);
  const createdAt = text(data.createdAt) ?? record.occurredAt;
  if (!gtin || !serial || !kid) return undefined;
  const url = text(data.url);
  // Only a code with an expiry date has an AI 17 in its link (generate-code.ts): the others' links
  // are not parsed (~4.5 µs a code, on every code a batch makes).
  const parsed = url && data.expiryDate !== undefined ? parseDigitalLink(url) : undefined;
  const metadata = data.metadata as Record<string, unknown> | undefined;
  return {
    asset_id: assetId,
    account_id: record.accountId,
    environment: record.environment,
    gtin,
    serial,
    batch: text(data.batch) ?? null,
    expiry: parsed?.ok ? (parsed.link.expiry ?? null) : null,
    kid,
    product_name: text(metadata?.name) ?? null,
    expires_at: text(data.expiresAt) ?? null,
    created_at: createdAt,
  };
}

/**
 * The row an auction object's `registered` event makes: its link's GTIN, the service serial, the
 * category as the batch (AI 10), the key that signed it, the title as the product's name.
 */
export function objectRowOf(event: StoredEvent): CodeDirectoryRow | undefined {
  const asset = chainedAssetOf(event, objectRegistered, 'obj_');
  if (!asset) return undefined;
  const { assetId, record } = asset;
  const { data } = event;
  const link = data.link as Record<string, unknown> | undefined;
  const gtin = text(link?.gtin);
  const serial = text(data.serviceSerial);
  const kid = text(link?.kid);
  if (!gtin || !serial || !kid) return undefined;
  return {
    asset_id: assetId,
    account_id: record.accountId,
    environment: record.environment,
    gtin,
    serial,
    batch: text(data.category) ?? null,
    expiry: null,
    kid,
    product_name: text(data.title) ?? null,
    expires_at: null,
    created_at: record.occurredAt,
  };
}

const directoryRowOf = (event: StoredEvent) => codeRowOf(event) ?? objectRowOf(event);

/**
 * Writes the codes of a batch of events, one statement; a replayed event rewrites the same row. With
 * `keyNumbers`, a row names its signing key's number in `directory_keys` instead of holding its key
 * id (verify-service migration 0012), the keys new to the table numbered by the same statement (a
 * key another transaction is numbering is waited for, then answered by ON CONFLICT's update). A key
 * the table holds is read, not written: an update of its row each batch left a dead row version per
 * key per batch, and held the row until commit, so that two replicas projecting one key's codes
 * took turns. Rows go in in asset-id order: asset ids grow with time (those of codes generated
 * without an Idempotency-Key; a key's are derived from it), so the key's index fills its last page
 * before splitting it (~59 bytes a code; in the join's order, 96: pages split in halves).
 */
export async function projectCodes(
  tx: SqlExecutor,
  events: readonly StoredEvent[],
  { keyNumbers = false }: { keyNumbers?: boolean } = {},
): Promise<number> {
  // One row per asset (ON CONFLICT may not touch a row twice in one statement).
  const rows = new Map<string, CodeDirectoryRow>();
  for (const event of events) {
    const row = directoryRowOf(event);
    if (row) rows.set(row.asset_id, row);
  }
  if (rows.size === 0) return 0;
  await tx.query(
    `WITH r AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(asset_id text, account_id text, environment text, gtin text, serial text,
         batch text, expiry text, kid text, product_name text, expires_at timestamptz, created_at timestamptz)
     ), wanted AS (
       SELECT DISTINCT kid FROM r WHERE $2::boolean
     ), known AS (
       SELECT k.id, k.kid FROM directory_keys k JOIN wanted w ON w.kid = k.kid
     ), added AS (
       INSERT INTO directory_keys (kid) SELECT kid FROM wanted WHERE kid NOT IN (SELECT kid FROM known) ORDER BY kid
       ON CONFLICT (kid) DO UPDATE SET kid = EXCLUDED.kid RETURNING id, kid
     ), numbered AS (
       SELECT id, kid FROM known UNION ALL SELECT id, kid FROM added
     )
     INSERT INTO code_directory (asset_id, account_id, environment, gtin, serial, batch, expiry, kid, key_id, product_name, expires_at, created_at)
     SELECT r.asset_id, r.account_id, r.environment, r.gtin, r.serial, r.batch, r.expiry, CASE WHEN n.id IS NULL THEN r.kid END, n.id,
       r.product_name, r.expires_at, r.created_at
     FROM r LEFT JOIN numbered n ON n.kid = r.kid
     ORDER BY r.asset_id
     ON CONFLICT (asset_id) DO UPDATE SET account_id = EXCLUDED.account_id, environment = EXCLUDED.environment,
       gtin = EXCLUDED.gtin, serial = EXCLUDED.serial, batch = EXCLUDED.batch, expiry = EXCLUDED.expiry, kid = EXCLUDED.kid,
       key_id = EXCLUDED.key_id, product_name = EXCLUDED.product_name, expires_at = EXCLUDED.expires_at,
       created_at = EXCLUDED.created_at`,
    [JSON.stringify([...rows.values()]), keyNumbers],
  );
  return rows.size;
}

/**
 * The code directory projection as a subscription handler: rows and checkpoint in one transaction,
 * exactly once, any replica may run it (createSqlProjection). `keyForms` (runtime's
 * Infrastructure.keyFormsAllowed): whether rows may name their key's number, asked per batch; no
 * when absent.
 */
export function createCodeProjection(
  db: SqlDatabase,
  name = codeDirectoryProjectionName,
  keyForms: () => Promise<boolean> = async () => false,
) {
  // projectCodes writes one statement and reads nothing back.
  return createSqlProjection({
    db,
    name,
    checkpointTable: 'verify_projection_checkpoints',
    project: async (tx, events) => projectCodes(tx, events, { keyNumbers: await keyForms() }),
    writeOnly: true,
  });
}
export type CodeProjection = ReturnType<typeof createCodeProjection>;

/**
 * Follows the event store from the projection's checkpoint. A fresh code is in the directory
 * about 100 ms after its event is stored (the linger below, plus the store's wake-up).
 */
export function runCodeProjection(
  eventStore: EventStore,
  projection: CodeProjection,
  onError: (error: unknown) => void,
): EventSubscription {
  return eventStore.subscribe({
    name: projection.name,
    checkpoints: projection.checkpoints,
    handle: projection.handle,
    onError,
    batchSize: 2_000,
    lingerMs: 100,
    // The directory is made of `code.generated` and `registered` events alone (directoryRowOf): the
    // others are not read.
    eventTypes: [codeGenerated, objectRegistered],
  });
}

/** The projected codes of an item in one environment, every account's (the caller keeps the signer's). */
export async function findProjectedCodes(
  sql: SqlExecutor,
  environment: Environment,
  gtin: string,
  serial: string,
): Promise<CodeLookup[]> {
  const rows = await sql.query<{
    asset_id: string;
    account_id: string;
    kid: string;
    batch: string | null;
    expiry: string | null;
    product_name: string | null;
    expires_at: Date | string | null;
    created_at: Date | string;
  }>(
    `SELECT d.asset_id, d.account_id, coalesce(d.kid, k.kid) AS kid, d.batch, d.expiry, d.product_name, d.expires_at, d.created_at
     FROM code_directory d LEFT JOIN directory_keys k ON k.id = d.key_id
     WHERE d.environment = $1 AND d.gtin = $2 AND d.serial = $3`,
    [environment, gtin, serial],
  );
  const iso = (value: Date | string) => new Date(value).toISOString();
  return rows.map((row) => ({
    assetId: row.asset_id,
    accountId: row.account_id,
    kid: row.kid,
    batch: row.batch,
    expiry: row.expiry,
    expiresAt: row.expires_at === null ? null : iso(row.expires_at),
    createdAt: iso(row.created_at),
    // Only what the resolver's page shows; the full metadata stays code-service's.
    metadata: row.product_name === null ? {} : { name: row.product_name },
  }));
}
