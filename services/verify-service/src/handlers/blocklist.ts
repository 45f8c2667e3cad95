import { findGtinSigner } from '@hallmark/accounts';
import type { Bus } from '@hallmark/bus';
import {
  type BlockKind,
  type BlockList,
  type BlockView,
  broadcasts,
  type CreateBlockBody,
  decodeInstantCursor,
  type Environment,
  encodeCursor,
  HallmarkError,
  type ListBlocksQuery,
  type Principal,
  type RemovedByCreator,
} from '@hallmark/contracts';
import { uuidV7 } from '@hallmark/crypto';
import type { EventStore } from '@hallmark/event-store';
import { checkAi82Value, checkGtin14 } from '@hallmark/gs1';
import { accountStream } from '@hallmark/provenance';
import { removalChunk, removeChunksForATurn } from '@hallmark/runtime';
import type { SqlDatabase, SqlExecutor } from '@hallmark/sql';

// The blocklist (issue #21; docs/API.md, "Blocklist"): a code, or a serial range of a GTIN, its
// owner marked as known counterfeit or withdrawn. Each change is an event in the account's stream
// (`code.blocked`, `code.unblocked`) with the row written in the event's transaction. Verification
// reads the active blocks from memory (BlocklistCache below, part of report-code.ts's CodeBlocks).

export interface BlocklistDeps {
  db: SqlDatabase;
  eventStore: EventStore;
  bus: Bus;
  /** Reads the owner's blocks into the local copy again, at once after a change here (other replicas follow the broadcast). */
  reload: (owner: Principal) => Promise<void>;
  clock: () => Date;
  /** HALLMARK_MAX_ACTIVE_BLOCKS: blocks an account may have active per environment. */
  maxActiveBlocks: number;
}

export interface BlockRow {
  block_id: string;
  account_id: string;
  environment: Environment;
  gtin: string;
  serial_from: string;
  serial_to: string;
  kind: BlockKind;
  reason: string | null;
  created_at: Date | string;
  removed_at: Date | string | null;
  created_text?: string;
}

/** A block as its view reads it: with the API key that made it. */
interface BlockViewRow extends BlockRow {
  created_by_key: string;
}

const iso = (value: Date | string) => new Date(value).toISOString();

const viewOf = (row: BlockViewRow): BlockView => ({
  blockId: row.block_id,
  gtin: row.gtin,
  serialFrom: row.serial_from,
  serialTo: row.serial_to,
  kind: row.kind,
  reason: row.reason,
  status: row.removed_at === null ? 'active' : 'removed',
  createdAt: iso(row.created_at),
  removedAt: row.removed_at === null ? null : iso(row.removed_at),
  createdBy: row.created_by_key,
});

/** A block as its events carry it: the view without `createdBy`, which the event says as `by`. */
const eventViewOf = ({ createdBy: _createdBy, ...view }: BlockView) => view;

/** The range a body asks for: `serial` alone, or `serialFrom` and `serialTo` of one length, in order. */
function rangeOf(body: CreateBlockBody): { from: string; to: string } {
  const gtinCheck = checkGtin14(body.gtin);
  if (!gtinCheck.ok) {
    throw new HallmarkError('INVALID_GTIN', `Invalid GTIN: ${gtinCheck.message}.`, {
      provided: body.gtin,
      expected: gtinCheck.reason === 'check-digit' ? gtinCheck.expected : '14 digits with a valid GS1 check digit',
    });
  }
  const single = body.serial !== undefined;
  const ranged = body.serialFrom !== undefined || body.serialTo !== undefined;
  if (single === ranged || (ranged && (body.serialFrom === undefined || body.serialTo === undefined))) {
    throw new HallmarkError('VALIDATION_ERROR', 'Give either serial, or serialFrom and serialTo.', {});
  }
  const from = (body.serial ?? body.serialFrom) as string;
  const to = (body.serial ?? body.serialTo) as string;
  // Each refusal names the field it is about, as the request named it (serial, or either end of a range).
  const ends = single
    ? ([['serial', from]] as const)
    : ([
        ['serialFrom', from],
        ['serialTo', to],
      ] as const);
  for (const [name, value] of ends) {
    const problem = checkAi82Value(name, value);
    if (problem) throw new HallmarkError('VALIDATION_ERROR', problem, { field: name, value });
  }
  if (from.length !== to.length || from > to) {
    throw new HallmarkError('VALIDATION_ERROR', 'serialFrom and serialTo must be of one length, serialFrom not after serialTo.', {
      field: 'serialTo',
      serialFrom: from,
      serialTo: to,
    });
  }
  if ((body.reason?.length ?? 0) > 1000)
    throw new HallmarkError('VALIDATION_ERROR', 'The reason is longer than 1000 characters.', {});
  return { from, to };
}

async function requireOwned(db: SqlDatabase, owner: Principal, gtin: string): Promise<void> {
  const signer = await findGtinSigner(db, owner.environment, gtin);
  if (!signer?.owned || signer.accountId !== owner.accountId) {
    throw new HallmarkError('GTIN_NOT_OWNED', 'Only the account that owns the GTIN may block its codes (GET /api/v1/gtins).', {
      gtin,
    });
  }
}

/** What the verification cache reads of a block (blocklist-cache.ts). */
export const columns = 'block_id, account_id, environment, gtin, serial_from, serial_to, kind, reason, created_at, removed_at';
/** What a block's view reads: its creator too. */
const viewColumns = `${columns}, created_by_key`;

function tooManyActiveBlocks(limit: number): HallmarkError {
  return new HallmarkError(
    'CONFLICT',
    `This account has ${limit.toLocaleString('en')} active blocks in this environment, the most it may have: block serial ranges, or remove blocks no longer needed.`,
    { limit },
  );
}

function tooManyActiveBlocksOfKey(limit: number, keyId: string): HallmarkError {
  return new HallmarkError(
    'CONFLICT',
    `This API key is restricted to some GTINs and holds ${limit.toLocaleString('en')} active blocks, the most such a key may: block serial ranges, or have a key without restrictions remove blocks it made (DELETE /blocklist?createdBy=) or block instead.`,
    { limit, keyId },
  );
}

/** Active blocks the key made, counted along code_blocklist_by_creator up to `limit`. */
async function activeBlocksMadeBy(sql: SqlExecutor, owner: Principal, keyId: string, limit: number): Promise<number> {
  const [row] = await sql.query<{ active: string | number }>(
    `SELECT count(*) AS active FROM (
       SELECT 1 FROM code_blocklist
       WHERE account_id = $1 AND environment = $2 AND created_by_key = $3 AND removed_at IS NULL LIMIT $4) AS made`,
    [owner.accountId, owner.environment, keyId, limit],
  );
  return Number(row?.active ?? 0);
}

/** Active blocks of the owner, as counted with the blocks (blocklist_active_counts). */
async function activeBlocksOf(sql: SqlExecutor, owner: Principal): Promise<number> {
  const [row] = await sql.query<{ active: number }>(
    'SELECT active FROM blocklist_active_counts WHERE account_id = $1 AND environment = $2',
    [owner.accountId, owner.environment],
  );
  return row?.active ?? 0;
}

/**
 * Takes `count` of the owner's places for active blocks, in the blocks' transaction: the row update
 * under the cap waits for another transaction's, so two requests at once cannot both take the last.
 */
async function takeActiveBlockPlaces(sql: SqlExecutor, owner: Principal, count: number, limit: number): Promise<void> {
  const taken = await sql.query(
    `INSERT INTO blocklist_active_counts AS counts (account_id, environment, active) SELECT $1, $2, $3::integer WHERE $3::integer <= $4::integer
     ON CONFLICT (account_id, environment) DO UPDATE SET active = counts.active + $3::integer WHERE counts.active + $3::integer <= $4::integer
     RETURNING active`,
    [owner.accountId, owner.environment, count, limit],
  );
  if (taken.length === 0) throw tooManyActiveBlocks(limit);
}

type BlockError = { code: string; message: string; details?: Record<string, unknown> };
type BlockResult = { block: BlockView } | { error: BlockError };

const errorResultOf = (error: HallmarkError): BlockResult => ({
  error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
});

/**
 * POST /blocklist and its CSV form: each block validated, owned and within the cap, or its refusal
 * given in its place; then every accepted block recorded at once, their events in one append and
 * their rows in its transaction; one reload after. (One append a block took 6-8 ms each embedded: a
 * CSV chunk of 500 lines outlasted the gateway's wait, answered 503 while its blocks were stored.)
 */
export async function createBlocks(
  deps: BlocklistDeps,
  request: { principal: Principal; client: { keyId: string }; blocks: CreateBlockBody[]; chunkKey?: string; keyLimit?: number },
): Promise<{ results: BlockResult[] }> {
  const { principal, chunkKey, keyLimit } = request;
  if (chunkKey !== undefined) {
    const done = await chunkResultsOf(deps.db, principal, chunkKey);
    if (done) return { results: done };
  }
  const owned = new Map<string, Promise<void>>();
  const results: (BlockResult | undefined)[] = [];
  const accepted: { index: number; row: BlockViewRow }[] = [];
  // Read once, then counted here: a line over the cap is refused before anything is appended
  // (the event store may append before the rows are written: KurrentDB); the count taken in the
  // blocks' transaction is what holds against other requests at once.
  const active = await activeBlocksOf(deps.db, principal);
  // A key given a limit of its own (one restricted to some GTINs) is counted the same way.
  const keyId = request.client.keyId;
  const activeOfKey = keyLimit === undefined ? 0 : await activeBlocksMadeBy(deps.db, principal, keyId, keyLimit);
  for (const [index, body] of request.blocks.entries()) {
    try {
      const { from, to } = rangeOf(body);
      if (active + accepted.length >= deps.maxActiveBlocks) throw tooManyActiveBlocks(deps.maxActiveBlocks);
      if (keyLimit !== undefined && activeOfKey + accepted.length >= keyLimit) throw tooManyActiveBlocksOfKey(keyLimit, keyId);
      let ownership = owned.get(body.gtin);
      if (!ownership) {
        ownership = requireOwned(deps.db, principal, body.gtin);
        ownership.catch(() => {});
        owned.set(body.gtin, ownership);
      }
      await ownership;
      accepted.push({
        index,
        row: {
          block_id: `blk_${uuidV7().replaceAll('-', '')}`,
          account_id: principal.accountId,
          environment: principal.environment,
          gtin: body.gtin,
          serial_from: from,
          serial_to: to,
          kind: body.kind,
          reason: body.reason ?? null,
          created_at: deps.clock(),
          removed_at: null,
          created_by_key: request.client.keyId,
        },
      });
    } catch (error) {
      if (!(error instanceof HallmarkError)) throw error;
      results[index] = errorResultOf(error);
    }
  }
  if (accepted.length > 0) {
    const recorded = [...results];
    for (const { index, row } of accepted) recorded[index] = { block: viewOf(row) };
    try {
      await recordBlocks(
        deps,
        principal,
        request.client.keyId,
        accepted.map(({ row }) => row),
        chunkKey === undefined ? undefined : { key: chunkKey, results: recorded as BlockResult[] },
        keyLimit,
      );
      Object.assign(results, recorded);
    } catch (error) {
      // The same chunk, sent again while its first sending still ran, was recorded by that one first.
      if (error instanceof ChunkRecordedMeanwhile && chunkKey !== undefined) {
        return { results: (await chunkResultsOf(deps.db, principal, chunkKey)) ?? [] };
      }
      // Other requests took the account's last places since the count above: none of these is
      // recorded, and each says so (the cap decides which lines of racing requests go in).
      if (!(error instanceof HallmarkError)) throw error;
      for (const { index } of accepted) results[index] = errorResultOf(error);
    }
  }
  if (results.some((result) => result !== undefined && 'block' in result)) await changed(deps, principal);
  return { results: results as BlockResult[] };
}

/** The results a bulk chunk sent under `chunkKey` was answered, when it was recorded (migration 0013). */
async function chunkResultsOf(sql: SqlExecutor, owner: Principal, chunkKey: string): Promise<BlockResult[] | undefined> {
  const rows = await sql.query<{ results: BlockResult[] }>(
    // Within the gateway's 24 hours for an Idempotency-Key: after them the key is free, and a file sent
    // with it again is a new request (docs/API.md), not the old one's answer.
    `SELECT results FROM block_chunks
      WHERE account_id = $1 AND environment = $2 AND chunk_key = $3 AND created_at > now() - interval '24 hours'`,
    [owner.accountId, owner.environment, chunkKey],
  );
  return rows[0]?.results;
}

/** Thrown inside a chunk's transaction when the same chunk's first sending recorded it first: nothing of this one is kept. */
class ChunkRecordedMeanwhile extends Error {}

/**
 * The blocks' `code.blocked` events in one append to the account's stream, their rows and places in
 * its transaction, and, for a bulk chunk sent with an Idempotency-Key, its results under its key. Of
 * two sendings of one chunk at once (a retry while the first still runs), the second waits for the
 * first's transaction (a lock on the key) and then records nothing.
 */
async function recordBlocks(
  deps: BlocklistDeps,
  principal: Principal,
  keyId: string,
  rows: readonly BlockViewRow[],
  chunk?: { key: string; results: BlockResult[] },
  keyLimit?: number,
): Promise<void> {
  await deps.eventStore.append(
    accountStream(principal),
    rows.map((row) => ({ type: 'code.blocked', data: { ...eventViewOf(viewOf(row)), by: keyId } })),
    {
      expectedVersion: 'any',
      readModels: {
        db: deps.db,
        write: async (sql: SqlExecutor) => {
          if (chunk) {
            await sql.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`block_chunks:${principal.accountId}:${chunk.key}`]);
            if (await chunkResultsOf(sql, principal, chunk.key)) throw new ChunkRecordedMeanwhile();
          }
          await takeActiveBlockPlaces(sql, principal, rows.length, deps.maxActiveBlocks);
          // After the account's places: their row's lock orders the account's block writes, so this
          // count sees every earlier one's blocks.
          if (keyLimit !== undefined && (await activeBlocksMadeBy(sql, principal, keyId, keyLimit)) + rows.length > keyLimit) {
            throw tooManyActiveBlocksOfKey(keyLimit, keyId);
          }
          await sql.query(
            `INSERT INTO code_blocklist (block_id, account_id, environment, gtin, serial_from, serial_to, kind, reason, created_at, created_by_key)
             SELECT r.block_id, r.account_id, r.environment, r.gtin, r.serial_from, r.serial_to, r.kind, r.reason, r.created_at, $2
             FROM jsonb_to_recordset($1::jsonb) AS r(block_id text, account_id text, environment text, gtin text, serial_from text,
               serial_to text, kind text, reason text, created_at timestamptz)`,
            [JSON.stringify(rows), keyId],
          );
          if (chunk) {
            await sql.query(
              // A row of the same name older than the key's 24 hours is another request's: replaced.
              `INSERT INTO block_chunks (account_id, environment, chunk_key, results) VALUES ($1, $2, $3, $4::jsonb)
               ON CONFLICT (account_id, environment, chunk_key) DO UPDATE SET results = EXCLUDED.results, created_at = now()`,
              [principal.accountId, principal.environment, chunk.key, JSON.stringify(chunk.results)],
            );
            await sql.query(`DELETE FROM block_chunks WHERE account_id = $1 AND created_at < now() - interval '2 days'`, [
              principal.accountId,
            ]);
          }
        },
      },
    },
  );
}

async function changed(deps: BlocklistDeps, principal: Principal): Promise<void> {
  await deps.reload(principal);
  await deps.bus.broadcast(broadcasts.blocklistChanged, { accountId: principal.accountId, environment: principal.environment });
}

/** Thrown inside the removal's transaction when another removal of the block committed first: nothing is appended. */
class RemovedMeanwhile extends Error {}

/**
 * DELETE /blocklist/{blockId}: the block is kept as removed; removing it again changes nothing. The
 * row is updated only while the block is active, in the event's transaction: of two removals at
 * once one appends `code.unblocked` (one webhook), the other answers the removal that won.
 */
export async function deleteBlock(
  deps: BlocklistDeps,
  request: { principal: Principal; client: { keyId: string }; blockId: string },
): Promise<BlockView> {
  const { principal, blockId } = request;
  const stored = async () => {
    const [row] = await deps.db.query<BlockViewRow>(
      `SELECT ${viewColumns} FROM code_blocklist WHERE block_id = $1 AND account_id = $2 AND environment = $3`,
      [blockId, principal.accountId, principal.environment],
    );
    return row;
  };
  const notFound = () => new HallmarkError('NOT_FOUND', 'There is no block with this id.', { blockId });
  const row = await stored();
  if (!row) throw notFound();
  if (row.removed_at !== null) return viewOf(row);
  const now = deps.clock();
  const removed = viewOf({ ...row, removed_at: now });
  try {
    await deps.eventStore.append(
      accountStream(principal),
      [{ type: 'code.unblocked', data: { ...eventViewOf(removed), by: request.client.keyId } }],
      {
        expectedVersion: 'any',
        readModels: {
          db: deps.db,
          write: async (sql: SqlExecutor) => {
            const updated = await sql.query<{ block_id: string }>(
              `UPDATE code_blocklist SET removed_at = $2, removed_by_key = $3 WHERE block_id = $1 AND removed_at IS NULL
               RETURNING block_id`,
              [blockId, now, request.client.keyId],
            );
            if (updated.length === 0) throw new RemovedMeanwhile();
            await sql.query(
              'UPDATE blocklist_active_counts SET active = active - 1 WHERE account_id = $1 AND environment = $2 AND active > 0',
              [principal.accountId, principal.environment],
            );
          },
        },
      },
    );
  } catch (error) {
    if (!(error instanceof RemovedMeanwhile)) throw error;
    // Blocks are kept when removed, so the winner's row is there.
    const winner = await stored();
    if (!winner) throw notFound();
    return viewOf(winner);
  }
  await changed(deps, principal);
  return removed;
}

/**
 * DELETE /blocklist?createdBy=<key id>: every active block the key made is removed, as one by one,
 * in transactions of removalChunk (each block its `code.unblocked` event, by the caller). After a key
 * leaks: its blocks are undone in one request, not one DELETE each. A chunk whose blocks another
 * removal took meanwhile is read again. One call removes for a turn (removeChunksForATurn).
 */
export async function removeBlocksMadeBy(
  deps: BlocklistDeps,
  request: { principal: Principal; client: { keyId: string }; createdBy: string },
): Promise<RemovedByCreator> {
  const { principal } = request;
  const outcome = await removeChunksForATurn(async () => {
    const rows = await deps.db.query<BlockViewRow>(
      `SELECT ${viewColumns} FROM code_blocklist
       WHERE account_id = $1 AND environment = $2 AND created_by_key = $3 AND removed_at IS NULL
       ORDER BY created_at DESC, block_id DESC LIMIT ${removalChunk}`,
      [principal.accountId, principal.environment, request.createdBy],
    );
    if (rows.length === 0) return { found: 0, removed: 0 };
    const now = deps.clock();
    try {
      await deps.eventStore.append(
        accountStream(principal),
        rows.map((row) => ({
          type: 'code.unblocked',
          data: { ...eventViewOf(viewOf({ ...row, removed_at: now })), by: request.client.keyId },
        })),
        {
          expectedVersion: 'any',
          readModels: {
            db: deps.db,
            write: async (sql: SqlExecutor) => {
              const updated = await sql.query<{ block_id: string }>(
                `UPDATE code_blocklist SET removed_at = $2, removed_by_key = $3
                 WHERE block_id = ANY($1::text[]) AND removed_at IS NULL RETURNING block_id`,
                [rows.map((row) => row.block_id), now, request.client.keyId],
              );
              if (updated.length !== rows.length) throw new RemovedMeanwhile();
              await sql.query(
                'UPDATE blocklist_active_counts SET active = greatest(active - $3, 0) WHERE account_id = $1 AND environment = $2',
                [principal.accountId, principal.environment, rows.length],
              );
            },
          },
        },
      );
      return { found: rows.length, removed: rows.length };
    } catch (error) {
      if (!(error instanceof RemovedMeanwhile)) throw error;
      return { found: rows.length, removed: 0 };
    }
  });
  if (outcome.removed > 0) await changed(deps, principal);
  return outcome;
}

/** GET /blocklist: newest first, keyset-paged. */
export async function listBlocks(db: SqlDatabase, owner: Principal, query: ListBlocksQuery): Promise<BlockList> {
  const limit = Math.min(query.limit ?? 20, 100);
  const params: unknown[] = [owner.accountId, owner.environment];
  let filter = '';
  if (query.gtin) {
    params.push(query.gtin);
    filter += ` AND gtin = $${params.length}`;
  }
  if (query.status) filter += query.status === 'active' ? ' AND removed_at IS NULL' : ' AND removed_at IS NOT NULL';
  if (query.createdBy) {
    params.push(query.createdBy);
    filter += ` AND created_by_key = $${params.length}`;
  }
  if (query.cursor) {
    const [at, id] = decodeInstantCursor(query.cursor, /^blk_[0-9a-f]{1,40}$/);
    params.push(at, id);
    filter += ` AND (created_at, block_id) < ($${params.length - 1}::timestamptz, $${params.length})`;
  }
  params.push(limit + 1);
  const rows = await db.query<BlockViewRow>(
    `SELECT ${viewColumns}, created_at::text AS created_text FROM code_blocklist WHERE account_id = $1 AND environment = $2${filter}
      ORDER BY created_at DESC, block_id DESC LIMIT $${params.length}`,
    params,
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const hasMore = rows.length > limit;
  return {
    blocks: page.map(viewOf),
    pagination: {
      limit,
      hasMore,
      nextCursor: hasMore && last?.created_text ? encodeCursor([last.created_text, last.block_id]) : null,
    },
  };
}
