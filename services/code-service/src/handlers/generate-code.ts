import { createHash } from 'node:crypto';
import { findGtinSigner, type GtinSigners, gtinClaimsLock, type SigningKeyring } from '@hallmark/accounts';
import {
  pastExpiryProblem,
  signedMessage,
  type ValidGenerateRequest,
  validateGenerateRequest,
  yymmddToIsoDate,
} from '@hallmark/codes';
import {
  type BatchItemResult,
  type ErrorData,
  GenerateCodeBody,
  type GeneratedCode,
  HallmarkError,
  type Principal,
} from '@hallmark/contracts';
import { uuidV7 } from '@hallmark/crypto';
import type { EventStore } from '@hallmark/event-store';
import { canonicalJson, startAssetHistory } from '@hallmark/provenance';
import { isConnectionError, type SqlDatabase } from '@hallmark/sql';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import {
  type CodeEvent,
  type DecidedCode,
  type DomainError,
  decideBatch,
  duplicateSerial,
  type GenerateCodeCommand,
  gtinNotOwned,
  initialCodeBatch,
  isDomainError,
  type SchemaFact,
} from '../domain/code-generation.ts';
import {
  type CodeRecord,
  codesInsert,
  findOwnCodesByAssetId,
  insertCodes,
  type NewCode,
  type StoredCode,
  storedAssetIds,
} from '../store/code-store.ts';
import { linkOfCode, type StoredLinkForm } from '../store/link-forms.ts';
import { mapInTurns, turnBefore } from './event-loop-turns.ts';
import type { SchemaCatalog } from './schemas.ts';

export interface GenerateDeps {
  schemas: SchemaCatalog;
  signers: GtinSigners;
  db: SqlDatabase;
  eventStore: EventStore;
  keyring: SigningKeyring;
  resolverUrl: string;
  linkOrder: 'spec' | 'gs1';
  /**
   * The link form new codes' rows name instead of holding their links (store/link-forms.ts); without
   * it, or while it answers undefined, links are stored whole.
   */
  linkForm?: (kid: string) => Promise<StoredLinkForm | undefined>;
  clock: () => Date;
  /** Small writes share transactions through it (group commit); without it each request writes its own. */
  groupCommit?: GroupCommit;
}

const itemSchema = TypeCompiler.Compile(GenerateCodeBody);

function schemaError(item: unknown): ErrorData | undefined {
  if (itemSchema.Check(item)) return undefined;
  const fields = [...itemSchema.Errors(item)].map((error) => ({
    field: error.path.replace(/^\//, '') || 'item',
    in: 'body',
    message: error.message,
  }));
  return {
    code: 'VALIDATION_ERROR',
    message: `Invalid item: check ${fields.map((field) => field.field).join(', ')}.`,
    details: { fields },
  };
}

/** A code's row refused by the unique constraint inside the write: the transaction rolls back, the batch is sent again without it. */
class SerialsTaken extends Error {
  constructor(readonly assetIds: ReadonlySet<string>) {
    super('Some serials of this batch were taken meanwhile.');
  }
}

const itemError = ({ code, message, details }: DomainError): ErrorData => ({ code, message, details });

/**
 * Generates codes: each item is checked on its own at the boundary (spec codes:
 * MISSING_REQUIRED_FIELD, INVALID_GTIN, else VALIDATION_ERROR), then decided by the code decider
 * (domain/code-generation.ts: GTIN_NOT_OWNED, the schema's VALIDATION_ERROR, DUPLICATE_SERIAL within
 * the batch) on the facts the shell found (who may sign the GTIN, what the schema says). The valid
 * ones are signed with the account's active key and their `code.generated` events and `codes` rows
 * written in one transaction. A serial some other request took is refused by the rows' unique
 * constraint: that transaction stores nothing, and the batch is written again without those items,
 * which are answered DUPLICATE_SERIAL. Results come back in the items' order, numbered from `firstIndex`,
 * with how many of them an earlier attempt with the same `requestKey` had stored (`madeBefore`).
 */
export async function generateCodes(
  deps: GenerateDeps,
  principal: Principal,
  items: readonly unknown[],
  firstIndex: number,
  requestId: string,
  requestKey?: string,
): Promise<GeneratedCodes> {
  const now = deps.clock();
  const nowMs = now.getTime();
  // One slot per item, in order; accepted items' slots are filled once they are signed.
  const results: Array<BatchItemResult | undefined> = [];
  const asked: Array<{ position: number; command: GenerateCodeCommand }> = [];

  const valid: Array<{ position: number; index: number; item: GenerateCodeBody; request: ValidGenerateRequest }> = [];
  for (const [offset, item] of items.entries()) {
    await turnBefore(offset);
    const index = firstIndex + offset;
    const invalid = schemaError(item);
    if (invalid) {
      results.push({ index, error: invalid });
      continue;
    }
    // With an Idempotency-Key, an item whose expiry date has passed since its first attempt made its
    // code (a retry after midnight UTC) is looked up before it is refused: it is answered that code.
    const checked = validateGenerateRequest(item as GenerateCodeBody, principal.environment, now, {
      allowPastExpiry: requestKey !== undefined,
    });
    if (!checked.ok) {
      results.push({ index, error: checked.problem });
      continue;
    }
    valid.push({ position: results.length, index, item: item as GenerateCodeBody, request: checked.request });
    results.push(undefined);
  }
  // Time-ordered, so the tables keyed by asset id take new codes at the end of their indexes. With an
  // Idempotency-Key, derived from it instead: a retry finds what its first attempt stored.
  const assetIds = valid.map(({ index, request: { gtin, serial } }) =>
    requestKey ? codeAssetIdOf(requestKey, index, gtin, serial) : `code_${uuidV7(nowMs).replaceAll('-', '')}`,
  );
  // A retry of a request whose codes were stored (its answer was lost) is answered those codes, as
  // the first attempt was allowed to make them: nothing is decided again (a schema changed or a GTIN
  // revoked since would refuse a code that exists and was paid for). A stored code of this key and
  // serial that is not this item (the key used again, after the gateway forgot it, for another lot)
  // is a serial taken, never an answer.
  const stored = requestKey ? await findOwnCodesByAssetId(deps.db, principal, assetIds) : new Map<string, CodeRecord>();
  const madeBefore: CodeRecord[] = [];
  for (const [offset, { position, index, item, request }] of valid.entries()) {
    await turnBefore(offset);
    const { gtin, serial, batch: lot, expiry, metadata } = request;
    const assetId = assetIds[offset] as string;
    const stale = stored.get(assetId);
    // An expiry date now past is looked past only for the key's own retries, within its day: a key
    // used again after the gateway forgot it is not answered a code that has expired.
    const earlier = stale && request.pastExpiry && nowMs - stale.createdAt.getTime() >= keyedRetryWindowMs ? undefined : stale;
    if (earlier) {
      if (isSameItem(earlier, { batch: lot, expiry, metadata })) {
        results[position] = { index, code: generatedCodeOf(earlier) };
        madeBefore.push(earlier);
      } else {
        results[position] = { index, error: itemError(duplicateSerial(gtin, serial)) };
      }
      continue;
    }
    if (request.pastExpiry) {
      results[position] = { index, error: pastExpiryProblem() };
      continue;
    }
    // Only the GTIN's owner signs its codes (the operator, for a GTIN nobody owns): docs/SIGNING.md.
    const signer = await deps.signers.signerOf(principal.environment, gtin);
    const { schemaId, schemaVersion } = item;
    let schema: SchemaFact | undefined;
    // The schema is asked only when the decision can reach it (the signer's own items).
    if (schemaId !== undefined && signer?.accountId === principal.accountId) {
      const outcome = await deps.schemas.validateForGeneration(principal, schemaId, schemaVersion, metadata);
      schema = outcome.missing
        ? { found: false, schemaId, schemaVersion }
        : {
            found: true,
            schemaId: outcome.schemaId,
            version: outcome.version,
            isValid: outcome.isValid,
            errors: outcome.errors.slice(0, maxSchemaErrorsPerItem),
            errorsTruncated: outcome.errorsTruncated || outcome.errors.length > maxSchemaErrorsPerItem,
          };
    }
    asked.push({
      position,
      command: {
        type: 'GenerateCode',
        now,
        assetId,
        gtin,
        serial,
        batch: lot,
        expiry,
        metadata,
        signerAccountId: signer?.accountId,
        schema,
      },
    });
  }
  // Decide, on the facts gathered: each item on the batch the earlier items (and the stored ones) left.
  const decisions = decideBatch(
    asked.map(({ command }) => command),
    initialCodeBatch(principal, madeBefore),
  );
  const accepted: Array<{ position: number; code: DecidedCode }> = [];
  for (const [offset, { position }] of asked.entries()) {
    const decision = decisions[offset] as CodeEvent[] | DomainError;
    if (isDomainError(decision)) results[position] = { index: firstIndex + position, error: itemError(decision) };
    else for (const event of decision) accepted.push({ position, code: event.data });
  }
  if (accepted.length === 0) return { results: filled(results), madeBefore: madeBefore.length };

  // A batch's signatures all at once, in the thread pool: its signing (~30-60 µs a code) spreads over
  // every core. A request of a few codes signs them here: handing one signature to the pool and back
  // costs about as much CPU as the signature itself, and under load it waits in the pool's queue
  // behind whatever else runs there (milliseconds at p50, tens at p99 in bench:generate), and so does the answer.
  const key = await deps.keyring.activeSigningKey(principal);
  const messages = accepted.map(({ code: { gtin, serial, batch, expiry } }) =>
    signedMessage({ kid: key.kid, gtin, serial, batch, expiry }),
  );
  const signatures =
    messages.length <= signOnTheLoopMaxCodes
      ? messages.map((message) => key.sign(message))
      : await Promise.all(messages.map((message) => key.signInThreadPool(message)));
  const pending = await mapInTurns(accepted, ({ position, code: decided }, offset) => {
    const { assetId, gtin, serial, batch, expiry, metadata, expiresAt, schemaId, schemaVersion } = decided;
    const signature = (signatures[offset] as Buffer).toString('base64url');
    const url = linkOfCode({ gtin, serial, batch, expiry, signature }, { origin: deps.resolverUrl, order: deps.linkOrder });
    const generated: GeneratedCode = {
      url,
      gtin,
      serial,
      ...(batch ? { batch } : {}),
      ...(expiry ? { expiryDate: yymmddToIsoDate(expiry) } : {}),
      signature,
      keyId: key.kid,
      assetId,
      createdAt: decided.createdAt,
      expiresAt,
    };
    const code: NewCode = {
      assetId,
      gtin,
      serial,
      batch: batch ?? null,
      expiry: expiry ?? null,
      signature,
      url,
      metadata,
      expiresAt: expiresAt === null ? null : new Date(expiresAt),
    };
    results[position] = { index: firstIndex + position, code: generated };
    const event = { ...generated, metadata, ...(schemaId !== undefined ? { schemaId, schemaVersion } : {}) };
    return { position, code, event };
  });

  const write: CodeWrite = {
    owner: principal,
    kid: key.kid,
    now,
    requestId,
    linkForm: await deps.linkForm?.(key.kid),
    entries: pending.map(({ code, event }) => ({ code, event })),
  };
  const taken =
    deps.groupCommit && pending.length <= groupCommitMaxCodesPerRequest
      ? await deps.groupCommit.write(write)
      : await writeCodes(deps, [write], { underClaimsLock: true }).then((refused) => refused[0] ?? new Set<string>());
  // A code this write did not insert may be this request's own, stored meanwhile: an earlier attempt
  // with the same Idempotency-Key still running when this retry began (its ids are derived from the
  // key), or a group whose commit went through though its answer was lost. An asset id belongs to
  // one request, so a stored row with it and this item's content is the code asked for: answered,
  // not DUPLICATE_SERIAL.
  const storedMeanwhile =
    taken.size > 0 ? await findOwnCodesByAssetId(deps.db, principal, [...taken]) : new Map<string, CodeRecord>();
  // Or its GTIN was revoked (or granted to another account) since it was decided: the insert takes
  // only the current signer's codes (codesInsert). Asked of the database, not the signers' cache.
  const signedNoLonger = taken.size > 0 ? await gtinsNoLongerSignedBy(deps.db, principal, pending, taken) : new Set<string>();
  let answeredStored = madeBefore.length;
  for (const entry of pending) {
    if (!taken.has(entry.code.assetId)) continue;
    const stored = storedMeanwhile.get(entry.code.assetId);
    if (stored && isSameItem(stored, entry.code)) {
      results[entry.position] = { index: firstIndex + entry.position, code: generatedCodeOf(stored) };
      answeredStored += 1;
    } else {
      const { gtin, serial } = entry.code;
      results[entry.position] = {
        index: firstIndex + entry.position,
        error: itemError(signedNoLonger.has(gtin) ? gtinNotOwned(gtin) : duplicateSerial(gtin, serial)),
      };
    }
  }
  return { results: filled(results), madeBefore: answeredStored };
}

/** The GTINs of these codes (of those refused, `taken`) whose signer is no longer `owner`. */
async function gtinsNoLongerSignedBy(
  db: SqlDatabase,
  owner: Principal,
  pending: ReadonlyArray<{ code: NewCode }>,
  taken: ReadonlySet<string>,
): Promise<Set<string>> {
  const gtins = new Set(pending.filter(({ code }) => taken.has(code.assetId)).map(({ code }) => code.gtin));
  const noLonger = new Set<string>();
  for (const gtin of gtins) {
    const signer = await findGtinSigner(db, owner.environment, gtin);
    if (signer?.accountId !== owner.accountId) noLonger.add(gtin);
  }
  return noLonger;
}

/** What a generate answers: every item's result, and how many of the codes an earlier attempt had stored. */
export interface GeneratedCodes {
  results: BatchItemResult[];
  /** Codes answered as an earlier attempt with the same Idempotency-Key stored them (its answer was lost): their quota was spent by that attempt. */
  madeBefore: number;
}

/** One request's accepted codes, signed, to be stored with their events. */
export interface CodeWrite {
  owner: Principal;
  kid: string;
  now: Date;
  requestId: string;
  /** The link form its codes' rows name (store/link-forms.ts), or undefined: their links whole. */
  linkForm?: StoredLinkForm | undefined;
  entries: ReadonlyArray<{ code: NewCode; event: Record<string, unknown> }>;
}

/**
 * Stores the codes of these writes and their `code.generated` events in one transaction (one
 * statement where the event store can: writeCodesInOneStatement). A serial
 * some other request (or an earlier code of this transaction) took is refused by the rows' unique
 * constraint: that transaction stores nothing, and it is written again without those codes. Resolves,
 * once everything else is durable, with each write's asset ids refused that way (DUPLICATE_SERIAL);
 * rejects with nothing stored.
 */
export async function writeCodes(
  deps: Pick<GenerateDeps, 'db' | 'eventStore'>,
  writes: readonly CodeWrite[],
  /**
   * Under gtinClaimsLock, shared (codesInsert): a claim's change waits for this write, or this write
   * reads it. A batch's chunks take it; group commit's small writes do not, for the round trips
   * (their statement still reads the claims as it starts).
   */
  { underClaimsLock = false }: { underClaimsLock?: boolean } = {},
): Promise<Array<Set<string>>> {
  if (deps.eventStore.startStreamsWithRows && deps.eventStore.atomicReadModels) {
    return writeCodesInOneStatement(deps, writes, underClaimsLock);
  }
  const refused = writes.map(() => new Set<string>());
  let pending = writes.flatMap((write, index) => write.entries.map((entry) => ({ index, write, entry })));
  // Each pass that meets a taken serial stores nothing and drops at least one code, so this ends.
  while (pending.length > 0) {
    const group = pending;
    try {
      await deps.eventStore.startStreams(
        group.map(({ write, entry }) =>
          startAssetHistory(
            { assetId: entry.code.assetId, owner: write.owner },
            [{ type: 'code.generated', data: entry.event, metadata: { requestId: write.requestId } }],
            write.now.toISOString(),
          ),
        ),
        {
          readModels: {
            db: deps.db,
            async write(sql) {
              const codes: StoredCode[] = group.map(({ write, entry }) => ({
                ...entry.code,
                owner: write.owner,
                kid: write.kid,
                createdAt: write.now,
                linkForm: write.linkForm,
              }));
              // Under the claims' lock, shared: a revocation waits for this write, or this write sees it.
              if (underClaimsLock) {
                await sql.query('SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0))', [gtinClaimsLock]);
              }
              const stored = await insertCodes(sql, codes);
              if (stored.size !== codes.length) {
                throw new SerialsTaken(new Set(codes.filter((code) => !stored.has(code.assetId)).map((code) => code.assetId)));
              }
            },
          },
        },
      );
      return refused;
    } catch (error) {
      if (!(error instanceof SerialsTaken)) throw error;
      for (const { index, entry } of group) if (error.assetIds.has(entry.code.assetId)) refused[index]?.add(entry.code.assetId);
      pending = group.filter(({ entry }) => !error.assetIds.has(entry.code.assetId));
    }
  }
  return refused;
}

/**
 * writeCodes where the event store writes rows and events in one statement: the codes' rows, and the
 * streams and events of the codes stored, in one round trip to the database (no transaction held
 * open across round trips: BEGIN, four statements and COMMIT were six). A taken serial leaves its
 * code out of the rows and so its event out of the store, as the passes of writeCodes do.
 */
async function writeCodesInOneStatement(
  deps: Pick<GenerateDeps, 'db' | 'eventStore'>,
  writes: readonly CodeWrite[],
  underClaimsLock: boolean,
): Promise<Array<Set<string>>> {
  const entries = writes.flatMap((write, index) => write.entries.map((entry) => ({ index, write, entry })));
  const assetIds = entries.map(({ entry }) => entry.code.assetId);
  const streams = await mapInTurns(entries, ({ write, entry }) => ({
    key: entry.code.assetId,
    ...startAssetHistory(
      { assetId: entry.code.assetId, owner: write.owner },
      [{ type: 'code.generated', data: entry.event, metadata: { requestId: write.requestId } }],
      write.now.toISOString(),
    ),
  }));
  const rows = {
    db: deps.db,
    // A revocation waits for this statement, or this statement sees it (codesInsert).
    ...(underClaimsLock ? { sharedLock: gtinClaimsLock } : {}),
    ...codesInsert(
      entries.map(({ write, entry }) => ({
        ...entry.code,
        owner: write.owner,
        kid: write.kid,
        createdAt: write.now,
        linkForm: write.linkForm,
      })),
    ),
  };
  const start = (deps.eventStore.startStreamsWithRows as NonNullable<EventStore['startStreamsWithRows']>).bind(deps.eventStore);
  let stored: Set<string>;
  try {
    stored = await start(streams, rows);
  } catch (error) {
    if (!isConnectionError(error)) throw error;
    // The connection was lost (a pooled one the server closed, or during the statement): whether the
    // statement committed is unknown. Once more; a code of these asset ids stored by then was stored
    // with its event (one statement), by the first attempt or this one.
    await start(streams, rows);
    stored = await storedAssetIds(deps.db, assetIds);
  }
  const refused = writes.map(() => new Set<string>());
  for (const { index, entry } of entries) if (!stored.has(entry.code.assetId)) refused[index]?.add(entry.code.assetId);
  return refused;
}

/**
 * The schema errors an item's VALIDATION_ERROR lists (the validate endpoint lists up to 100): a
 * batch chunk's answer of 500 items must still fit one bus message (1 MB).
 */
const maxSchemaErrorsPerItem = 10;

/** How long the gateway keeps an Idempotency-Key (docs/API.md): the retries of one request fall within it. */
const keyedRetryWindowMs = 24 * 3_600_000;

/** Requests of at most this many codes sign them on the event loop rather than in the thread pool. */
const signOnTheLoopMaxCodes = 4;

/** Requests of at most this many codes go through the group commit; larger ones (batch chunks) are a transaction of their own. */
export const groupCommitMaxCodesPerRequest = 100;

/** Writes of concurrent requests sharing transactions: see createGroupCommit. */
export interface GroupCommit {
  /** Resolves, once the write's codes and events are durable, with its asset ids refused as taken serials. */
  write(write: CodeWrite): Promise<Set<string>>;
}

/**
 * Group commit: while `concurrency` transactions are in flight, writes wait, and every write that
 * arrived meanwhile goes into the next transaction (up to `maxCodes` codes), so under load one
 * commit (one WAL flush) carries many requests' codes and events instead of one. A new transaction
 * starts after the current turn of the event loop, with every write that arrived in it: PGlite runs
 * a whole transaction in microtasks, so without that wait each write of the embedded form would
 * commit alone before the next request's callback ran. A lone request waits for nothing else.
 * Each write's promise settles only after the transaction holding its codes has committed. A
 * taken serial refuses only its own code (see writeCodes); when a shared transaction fails
 * otherwise, each write of it is tried again alone, so one request's failure is its own.
 * `concurrency`: 1 for PGlite (one connection), 4 for PostgreSQL (whose commits overlap), by default.
 */
export function createGroupCommit(
  deps: Pick<GenerateDeps, 'db' | 'eventStore'>,
  options: { maxCodes?: number; concurrency?: number } = {},
): GroupCommit {
  // Grouping relies on a failed transaction storing nothing, so that the group can be written again
  // without a taken serial; where events are not stored with their rows (KurrentDB), each write is its own.
  if (!deps.eventStore.atomicReadModels) return { write: async (write) => (await writeCodes(deps, [write]))[0] ?? new Set() };
  const maxCodes = options.maxCodes ?? 500;
  const concurrency = options.concurrency ?? (deps.db.engine === 'pglite' ? 1 : 4);
  type Waiting = { write: CodeWrite; resolve: (refused: Set<string>) => void; reject: (error: unknown) => void };
  const queue: Waiting[] = [];
  let running = 0;
  let scheduled = false;

  const writeAlone = async (waiting: Waiting) => {
    try {
      waiting.resolve((await writeCodes(deps, [waiting.write]))[0] ?? new Set());
    } catch (error) {
      waiting.reject(error);
    }
  };

  const writeGroup = async (group: Waiting[]) => {
    if (group.length === 1) return writeAlone(group[0] as Waiting);
    try {
      const refused = await writeCodes(
        deps,
        group.map((waiting) => waiting.write),
      );
      for (const [index, waiting] of group.entries()) waiting.resolve(refused[index] ?? new Set());
    } catch {
      for (const waiting of group) await writeAlone(waiting);
    }
  };

  const startTransactions = () => {
    scheduled = false;
    while (running < concurrency && queue.length > 0) {
      let codes = 0;
      let count = 0;
      while (count < queue.length && (count === 0 || codes + (queue[count]?.write.entries.length ?? 0) <= maxCodes)) {
        codes += queue[count]?.write.entries.length ?? 0;
        count += 1;
      }
      running += 1;
      void writeGroup(queue.splice(0, count)).finally(() => {
        running -= 1;
        if (queue.length > 0) schedule();
      });
    }
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(startTransactions);
  };

  return {
    write(write) {
      return new Promise((resolve, reject) => {
        queue.push({ write, resolve, reject });
        if (running < concurrency) schedule();
      });
    },
  };
}

function filled(results: ReadonlyArray<BatchItemResult | undefined>): BatchItemResult[] {
  return results.map((result, position) => {
    if (!result) throw new Error(`generateCodes left item ${position} without a result`);
    return result;
  });
}

/**
 * The asset id of an item of a request with an Idempotency-Key (the gateway's scoped hash of it):
 * the same on every retry of that request, and another for another item, GTIN or serial.
 */
export function codeAssetIdOf(requestKey: string, index: number, gtin: string, serial: string): string {
  return `code_${createHash('sha256').update(`hallmark:code:${requestKey}:${index}:${gtin}:${serial}`).digest('hex').slice(0, 32)}`;
}

/**
 * Whether a stored code is this item (its GTIN and serial are in the asset id): the same lot, expiry
 * date and metadata. A key used again after the gateway forgot it (24 hours) for another lot of the
 * same serial derives the same asset id, and must not be answered the earlier lot's code.
 */
function isSameItem(
  stored: CodeRecord,
  item: { batch: string | null | undefined; expiry: string | null | undefined; metadata: Record<string, unknown> },
): boolean {
  return (
    (stored.batch ?? null) === (item.batch ?? null) &&
    (stored.expiry ?? null) === (item.expiry ?? null) &&
    canonicalJson(stored.metadata ?? {}) === canonicalJson(item.metadata ?? {})
  );
}

/** A stored code as POST /code/generate answered it. */
function generatedCodeOf(stored: CodeRecord): GeneratedCode {
  return {
    url: stored.url,
    gtin: stored.gtin,
    serial: stored.serial,
    ...(stored.batch ? { batch: stored.batch } : {}),
    ...(stored.expiry ? { expiryDate: yymmddToIsoDate(stored.expiry) } : {}),
    signature: stored.signature,
    keyId: stored.kid,
    assetId: stored.assetId,
    createdAt: stored.createdAt.toISOString(),
    expiresAt: stored.expiresAt?.toISOString() ?? null,
  };
}

/** POST /code/generate: a batch of one, whose error is the answer. */
export async function generateCode(
  deps: GenerateDeps,
  principal: Principal,
  body: GenerateCodeBody,
  requestId: string,
  requestKey?: string,
): Promise<GeneratedCode & { madeBefore?: true }> {
  const {
    results: [result],
    madeBefore,
  } = await generateCodes(deps, principal, [body], 0, requestId, requestKey);
  if (!result) throw new Error('generateCodes answered no result for one item');
  if ('error' in result) throw HallmarkError.fromData(result.error as ErrorData);
  return madeBefore > 0 ? { ...result.code, madeBefore: true } : result.code;
}
