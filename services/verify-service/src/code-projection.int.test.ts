import { createGtinSigners, ensureOperator, insertGtinClaim, newGtinClaim, provisionAccount } from '@hallmark/accounts';
import { createInProcessBus } from '@hallmark/bus';
import { type CodeLookup, type Environment, findCodesRpc, type Principal, rpcSubject } from '@hallmark/contracts';
import { createSqlEventStore, type EventStore, ProjectionMovedOn, type StoredEvent } from '@hallmark/event-store';
import { formatDigitalLink } from '@hallmark/gs1';
import { startAssetHistory } from '@hallmark/provenance';
import { createPostgresDatabase, createTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCodeDirectory } from './code-directory.ts';
import {
  codeDirectoryProjectionName,
  createCodeProjection,
  findProjectedCodes,
  projectCodes,
  runCodeProjection,
} from './code-projection.ts';
import { migrateVerifyService } from './migrations.ts';

let db: SqlDatabase;
let testUrl: string;
let drop: () => Promise<void>;
let store: EventStore;
let brand: Principal;
let rival: Principal;
const gtin = '09506000134369';
const at = '2026-11-25T10:00:00.000Z';

let counter = 0;
/** A code's first event as code-service writes it (generate-code.ts). */
function codeStream(
  owner: Principal,
  serial: string,
  extra: { batch?: string; expiry?: string; name?: string; environment?: Environment } = {},
) {
  counter += 1;
  const assetId = `code_0196${String(counter).padStart(28, '0')}`;
  const url = formatDigitalLink({
    origin: 'https://id.example',
    gtin,
    serial,
    ...(extra.batch ? { batch: extra.batch } : {}),
    ...(extra.expiry ? { expiry: extra.expiry } : {}),
    signature: `sig${counter}`,
  });
  const data = {
    url,
    gtin,
    serial,
    ...(extra.batch ? { batch: extra.batch } : {}),
    ...(extra.expiry ? { expiryDate: '2031-06-30' } : {}),
    signature: `sig${counter}`,
    keyId: `kid-${owner.accountId}`,
    assetId,
    createdAt: at,
    expiresAt: extra.expiry ? '2031-06-30T23:59:59.999Z' : null,
    metadata: extra.name ? { name: extra.name, colour: 'red' } : {},
  };
  return {
    assetId,
    stream: startAssetHistory({ assetId, owner }, [{ type: 'code.generated', data, metadata: { requestId: 'r' } }], at),
  };
}

async function rows() {
  return db.query<Record<string, unknown>>(
    `SELECT asset_id, account_id, environment, gtin, serial, batch, expiry, kid, product_name,
            to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') AS expires_at,
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') AS created_at
     FROM code_directory ORDER BY asset_id`,
  );
}

/** Every code this file has stored, by asset id: what a projection from an empty checkpoint must write. */
const storedCodes: string[] = [];
async function storeCodes(codes: readonly { assetId: string; stream: Parameters<EventStore['startStreams']>[0][number] }[]) {
  await store.startStreams(codes.map((code) => code.stream));
  storedCodes.push(...codes.map((code) => code.assetId));
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 25));

/**
 * The whole log up to and including the last event of `streamId`. readAll stops below the oldest
 * transaction in flight that may write to the events (the event store's readHorizon): right after a
 * commit, readAll may return only a prefix of what is committed, even nothing. So wait until it
 * reaches the event.
 */
async function readThrough(streamId: string) {
  const last = await store.readLastEvent(streamId);
  if (!last) throw new Error(`no stream ${streamId}`);
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const page = await store.readAll({ limit: 100_000 });
    if (page.events.some((event) => event.eventId === last.eventId)) return page;
    await pause();
  }
  throw new Error(`readAll never reached the last event of ${streamId}`);
}

/**
 * Waits until the projection's checkpoint is at or past the last event of `streamId` (the order
 * of the SQL store's cursor, `<transaction id>:<global position>`): it has committed every batch
 * up to there. Waiting for a row count instead returns as soon as enough rows exist, which says
 * nothing about whether the projection is done.
 */
async function waitForCheckpointPast(streamId: string) {
  const last = await store.readLastEvent(streamId);
  if (!last) throw new Error(`no stream ${streamId}`);
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const [reached] = await db.query<{ past: boolean }>(
      `SELECT (split_part(c.cursor, ':', 1)::xid8, split_part(c.cursor, ':', 2)::bigint) >= (e.transaction_id, e.global_position) AS past
       FROM verify_projection_checkpoints c, events e WHERE c.name = $1 AND e.event_id = $2::uuid`,
      [codeDirectoryProjectionName, last.eventId],
    );
    if (reached?.past) return;
    await pause();
  }
  throw new Error(`the projection's checkpoint never reached the last event of ${streamId}`);
}

async function checkpoint() {
  const found = await db.query<{ cursor: string }>('SELECT cursor FROM verify_projection_checkpoints WHERE name = $1', [
    codeDirectoryProjectionName,
  ]);
  return found[0]?.cursor;
}

async function reset() {
  await db.query('DELETE FROM code_directory');
  await db.query('DELETE FROM verify_projection_checkpoints');
}

beforeAll(async () => {
  const test = await createTestDatabase('verify_codes');
  testUrl = test.url;
  db = createPostgresDatabase({ connectionString: test.url, applicationName: 'test-verify-code-projection' });
  drop = async () => {
    await db.close();
    await test.drop();
  };
  store = await createSqlEventStore(db, { pollIntervalMs: 20 });
  await migrateVerifyService(db);
  const now = new Date(at);
  brand = {
    accountId: (
      await provisionAccount({ db, eventStore: store }, { name: 'Brand', tier: 'enterprise', environment: 'live' }, now)
    ).account.id,
    environment: 'live',
  };
  rival = {
    accountId: (
      await provisionAccount({ db, eventStore: store }, { name: 'Rival', tier: 'enterprise', environment: 'live' }, now)
    ).account.id,
    environment: 'live',
  };
});

afterAll(async () => {
  await drop?.();
});

describe('the code directory projection (event store → code_directory, PostgreSQL)', () => {
  it('writes a row per code.generated event with what verification needs, and nothing for other events', async () => {
    await reset();
    const first = codeStream(brand, 'P-1', { batch: 'LOT1', expiry: '310630', name: 'Tonic' });
    const second = codeStream({ ...brand, environment: 'test' }, 'P-2');
    await storeCodes([first, second]);
    // Not codes: an auction object's history, an account's event, a later event of a code.
    await store.startStreams([
      startAssetHistory({ assetId: 'obj_1', owner: brand }, [{ type: 'registered', data: { gtin, serial: 'X' } }], at),
    ]);
    await store.append(`account-${brand.accountId}-live`, [{ type: 'code.generated', data: { gtin, serial: 'Y' } }], {
      expectedVersion: 'any',
    });
    await store.append(`asset-${first.assetId}`, [{ type: 'code.report-confirmed', data: { reportId: 'r1' } }], {
      expectedVersion: 1,
    });
    // Every event readable before the projection starts, so its first page holds them all: it
    // subscribes to code.generated only, and a later page of other events alone would move its
    // stored checkpoint only after a while (createSqlProjection's idleCheckpointMs).
    await readThrough(`asset-${first.assetId}`);
    const projection = runCodeProjection(store, createCodeProjection(db), (error) => {
      throw error;
    });
    try {
      await waitForCheckpointPast(`asset-${first.assetId}`);
      expect(await rows()).toEqual([
        {
          asset_id: first.assetId,
          account_id: brand.accountId,
          environment: 'live',
          gtin,
          serial: 'P-1',
          batch: 'LOT1',
          expiry: '310630',
          kid: `kid-${brand.accountId}`,
          product_name: 'Tonic',
          expires_at: '2031-06-30T23:59:59.999',
          created_at: '2026-11-25T10:00:00.000',
        },
        {
          asset_id: second.assetId,
          account_id: brand.accountId,
          environment: 'test',
          gtin,
          serial: 'P-2',
          batch: null,
          expiry: null,
          kid: `kid-${brand.accountId}`,
          product_name: null,
          expires_at: null,
          created_at: '2026-11-25T10:00:00.000',
        },
      ]);
      // The checkpoint is past every event (the last one written is the report above), so a restart reads nothing again.
      const page = await store.readAll({ after: (await checkpoint()) as string });
      expect(page.events).toEqual([]);
    } finally {
      await projection.stop();
    }
    expect(await findProjectedCodes(db, 'live', gtin, 'P-1')).toEqual([
      {
        assetId: first.assetId,
        accountId: brand.accountId,
        kid: `kid-${brand.accountId}`,
        batch: 'LOT1',
        expiry: '310630',
        expiresAt: '2031-06-30T23:59:59.999Z',
        createdAt: at,
        metadata: { name: 'Tonic' },
      },
    ]);
    expect(await findProjectedCodes(db, 'live', gtin, 'P-2')).toEqual([]);
  });

  it('is idempotent on replay: a batch handled twice, or the whole log again from no checkpoint, gives the same rows', async () => {
    await reset();
    const codes = Array.from({ length: 30 }, (_, i) => codeStream(brand, `R-${i}`, { name: `N${i}` }));
    await storeCodes(codes);
    const lastStream = `asset-${codes.at(-1)?.assetId}`;
    const all = await readThrough(lastStream);
    const projection = createCodeProjection(db);
    await projection.checkpoints.load(codeDirectoryProjectionName);
    await projection.handle(all.events, all.cursor);
    const once = await rows();
    expect(once.filter((row) => String(row.serial).startsWith('R-')).length).toBe(30);
    // The same events again, after the checkpoint moved (a crash between commit and acknowledgement).
    const replay = createCodeProjection(db);
    await replay.checkpoints.load(codeDirectoryProjectionName);
    await replay.handle(all.events, all.cursor);
    // And a batch holding one code's event twice.
    const doubled = all.events.filter((event) => event.type === 'code.generated').slice(0, 2);
    await replay.handle([...doubled, ...doubled], all.cursor);
    expect(await rows()).toEqual(once);

    // From scratch (no checkpoint): every code of the log, once.
    await reset();
    const fresh = runCodeProjection(store, createCodeProjection(db), () => {});
    try {
      await waitForCheckpointPast(lastStream);
      const rebuilt = await rows();
      expect(rebuilt.map((row) => row.asset_id)).toEqual([...storedCodes].sort());
      expect(rebuilt.filter((row) => String(row.serial).startsWith('R-'))).toEqual(
        once.filter((row) => String(row.serial).startsWith('R-')),
      );
      expect(new Set(rebuilt.map((row) => row.asset_id)).size).toBe(rebuilt.length);
    } finally {
      await fresh.stop();
    }
  });

  it('names each signing key by its number while the key gate is open, and its id whole while shut; readers see the same key ids', async () => {
    await reset();
    const codes = [codeStream(brand, 'K-1'), codeStream(brand, 'K-2', { batch: 'L1' }), codeStream(rival, 'K-1')];
    await storeCodes(codes);
    const all = await readThrough(`asset-${codes.at(-1)?.assetId}`);
    const stored = async () =>
      db.query<{ serial: string; kid: string | null; key: string | null }>(
        `SELECT d.serial, d.kid, k.kid AS key FROM code_directory d LEFT JOIN directory_keys k ON k.id = d.key_id
         WHERE d.serial LIKE 'K-%' ORDER BY d.asset_id`,
      );
    const answered = async () =>
      (await Promise.all(['K-1', 'K-2'].map((serial) => findProjectedCodes(db, 'live', gtin, serial))))
        .flat()
        .map((code) => [code.accountId, code.kid])
        .sort();
    const expected = [
      [brand.accountId, `kid-${brand.accountId}`],
      [brand.accountId, `kid-${brand.accountId}`],
      [rival.accountId, `kid-${rival.accountId}`],
    ].sort();

    let open = true;
    const projection = createCodeProjection(db, codeDirectoryProjectionName, async () => open);
    await projection.checkpoints.load(codeDirectoryProjectionName);
    await projection.handle(all.events, all.cursor);
    expect(await stored()).toEqual([
      { serial: 'K-1', kid: null, key: `kid-${brand.accountId}` },
      { serial: 'K-2', kid: null, key: `kid-${brand.accountId}` },
      { serial: 'K-1', kid: null, key: `kid-${rival.accountId}` },
    ]);
    expect(await answered()).toEqual(expected);

    // A verify-service of the release before is connected: a replay writes the key ids whole again.
    open = false;
    await projection.handle(all.events, all.cursor);
    expect((await stored()).map((row) => [row.kid, row.key])).toEqual([
      [`kid-${brand.accountId}`, null],
      [`kid-${brand.accountId}`, null],
      [`kid-${rival.accountId}`, null],
    ]);
    expect(await answered()).toEqual(expected);
    // A row with neither is refused by the table.
    await expect(db.query(`UPDATE code_directory SET kid = NULL WHERE serial = 'K-2'`)).rejects.toThrow(
      /code_directory_kid_or_key_id/,
    );
  });

  it('reads a numbered key’s row, not writes it, when later batches name that key', async () => {
    const signer: Principal = { accountId: `acc_known_${counter}`, environment: 'live' };
    const codes = [codeStream(signer, 'KNOWN-1'), codeStream(signer, 'KNOWN-2'), codeStream(signer, 'KNOWN-3')];
    await storeCodes(codes);
    const all = await readThrough(`asset-${codes.at(-1)?.assetId}`);
    const events = all.events.filter((event) => codes.some((code) => event.streamId === `asset-${code.assetId}`));
    expect(events.length).toBe(3);
    // xmin: the transaction that wrote the row's current version; an update, even to the same value, changes it.
    const keyRow = async () =>
      db.query<{ id: number; version: string }>(`SELECT id, xmin::text AS version FROM directory_keys WHERE kid = $1`, [
        `kid-${signer.accountId}`,
      ]);
    await db.transaction((tx) => projectCodes(tx, [events[0] as StoredEvent], { keyNumbers: true }));
    const numbered = await keyRow();
    expect(numbered).toHaveLength(1);
    await db.transaction((tx) => projectCodes(tx, [events[1] as StoredEvent], { keyNumbers: true }));
    await db.transaction((tx) => projectCodes(tx, events as StoredEvent[], { keyNumbers: true }));
    expect(await keyRow()).toEqual(numbered);
    const rows = await db.query<{ key_id: number | null; kid: string | null }>(
      `SELECT key_id, kid FROM code_directory WHERE serial LIKE 'KNOWN-%'`,
    );
    expect(rows).toEqual(Array.from({ length: 3 }, () => ({ key_id: numbered[0]?.id, kid: null })));
  });

  it('writes a page’s rows in asset-id order, whatever order its events come in', async () => {
    // Asset ids grow with time, so rows written in their order add to the key's last leaf page,
    // which PostgreSQL fills to 90% before it splits; rows written in another order split pages in
    // the middle, in halves (the key took 96 bytes a code instead of 59 in bench:batch, 2026-12-08).
    const codes = Array.from({ length: 40 }, (_, i) => codeStream(brand, `ORDER-${i}`));
    await storeCodes(codes);
    const all = await readThrough(`asset-${codes.at(-1)?.assetId}`);
    const events = all.events.filter((event) => codes.some((code) => event.streamId === `asset-${code.assetId}`));
    expect(events).toHaveLength(40);
    // Every third event first, then the rest backwards: no order a sort could keep by chance.
    const shuffled = [...events.filter((_, i) => i % 3 === 0), ...events.filter((_, i) => i % 3 !== 0).reverse()];
    for (const keyNumbers of [false, true]) {
      await db.query('TRUNCATE code_directory');
      await db.transaction((tx) => projectCodes(tx, shuffled, { keyNumbers }));
      // In a table emptied by TRUNCATE, one writer's rows take the heap's places in the order it wrote them.
      const written = await db.query<{ asset_id: string }>('SELECT asset_id FROM code_directory ORDER BY ctid');
      expect(written.map((row) => row.asset_id)).toEqual(codes.map((code) => code.assetId).sort());
    }
    // Rows and checkpoints agree again for the tests after this one.
    await reset();
  });

  it('gives a new signing key one number when two transactions project its first codes at once', async () => {
    const racer: Principal = { accountId: `acc_race_${counter}`, environment: 'live' };
    const codes = [codeStream(racer, 'RACE-1'), codeStream(racer, 'RACE-2')];
    await storeCodes(codes);
    const all = await readThrough(`asset-${codes.at(-1)?.assetId}`);
    const events = all.events.filter((event) => codes.some((code) => event.streamId === `asset-${code.assetId}`));
    expect(events.length).toBe(2);
    const second = createPostgresDatabase({ connectionString: testUrl });
    try {
      // The first transaction numbers the key and holds its commit; the second waits on it, then reads its number.
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const first = db.transaction(async (tx) => {
        await projectCodes(tx, [events[0] as StoredEvent], { keyNumbers: true });
        await held;
      });
      await pause();
      const other = second.transaction((tx) => projectCodes(tx, [events[1] as StoredEvent], { keyNumbers: true }));
      await pause();
      release();
      await Promise.all([first, other]);
    } finally {
      await second.close();
    }
    const keyIds = await db.query<{ key_id: number | null; kid: string | null }>(
      `SELECT key_id, kid FROM code_directory WHERE serial LIKE 'RACE-%'`,
    );
    expect(keyIds.length).toBe(2);
    expect(keyIds.every((row) => row.kid === null && row.key_id !== null)).toBe(true);
    expect(new Set(keyIds.map((row) => row.key_id)).size).toBe(1);
    expect(await db.query(`SELECT 1 FROM directory_keys WHERE kid = $1`, [`kid-${racer.accountId}`])).toHaveLength(1);
  });

  it('commits rows and checkpoint together: a batch refused for a moved checkpoint writes no row (exactly once)', async () => {
    await reset();
    const code = codeStream(brand, 'X-1');
    await storeCodes([code]);
    const page = await readThrough(`asset-${code.assetId}`);
    const mine = page.events.filter((event: StoredEvent) => event.streamId === `asset-${code.assetId}`);
    expect(mine.map((event) => event.type)).toEqual(['code.generated']);
    const stale = createCodeProjection(db);
    await stale.checkpoints.load(codeDirectoryProjectionName);
    // Another replica projects first and moves the checkpoint.
    const other = createCodeProjection(db);
    await other.checkpoints.load(codeDirectoryProjectionName);
    await other.handle([], page.cursor);
    await expect(stale.handle(mine, 'elsewhere')).rejects.toBeInstanceOf(ProjectionMovedOn);
    expect(await rows()).toEqual([]);
    expect(await checkpoint()).toBe(page.cursor);

    // A crash between the rows and the checkpoint: neither is kept, so the batch is projected again.
    await reset();
    const crashing: SqlDatabase = {
      ...db,
      transaction: (work) =>
        db.transaction((tx) =>
          work({
            ...tx,
            query: (text, params) =>
              text.includes('INSERT INTO verify_projection_checkpoints')
                ? Promise.reject(new Error('crash'))
                : tx.query(text, params),
          }),
        ),
    };
    const crashed = createCodeProjection(crashing);
    await crashed.checkpoints.load(codeDirectoryProjectionName);
    await expect(crashed.handle(mine, page.cursor)).rejects.toThrow('crash');
    expect(await rows()).toEqual([]);
    expect(await checkpoint()).toBeUndefined();
  });

  it('projects every code once with two replicas running, while codes are being written', async () => {
    await reset();
    // Each replica's committed batches (handle resolved: rows and checkpoint committed), and any
    // error other than the expected refusal of a batch another replica has already projected.
    const committed: StoredEvent[][] = [];
    const errors: unknown[] = [];
    const replicas = [0, 1].map(() => {
      const projection = createCodeProjection(db);
      const handle: typeof projection.handle = async (events, cursor) => {
        await projection.handle(events, cursor);
        committed.push(events);
      };
      return runCodeProjection(store, { ...projection, handle }, (error) => {
        if (!(error instanceof ProjectionMovedOn)) errors.push(error);
      });
    });
    const codes = Array.from({ length: 200 }, (_, i) => codeStream(brand, `C-${i}`));
    try {
      for (let i = 0; i < codes.length; i += 20) await storeCodes(codes.slice(i, i + 20));
      await waitForCheckpointPast(`asset-${codes.at(-1)?.assetId}`);
    } finally {
      await Promise.all(replicas.map((replica) => replica.stop()));
    }
    expect(errors).toEqual([]);
    // From the empty checkpoint, every code of the log (this test's 200 and the earlier tests'), no other row.
    const projected = await rows();
    expect(projected.map((row) => row.asset_id)).toEqual([...storedCodes].sort());
    expect(projected.filter((row) => String(row.serial).startsWith('C-')).length).toBe(200);
    // Exactly once: across both replicas, no event was in two committed batches (rows are upserts by
    // asset id, so a count of rows could not show a batch projected twice), and every code's was in one.
    const committedIds = committed.flat().map((event) => event.eventId);
    expect(committedIds.length).toBe(new Set(committedIds).size);
    const projectedCodes = committed
      .flat()
      .filter((event) => event.type === 'code.generated')
      .map((event) => event.streamId.replace(/^asset-/, ''))
      .filter((assetId) => assetId.startsWith('code_'));
    expect(projectedCodes.sort()).toEqual([...storedCodes].sort());
  });
});

describe('the code directory (read model first, code-service for a miss and as long as it answers)', () => {
  const item = (assetId: string, accountId: string): CodeLookup => ({
    assetId,
    accountId,
    kid: 'kid-from-code-service',
    batch: null,
    expiry: null,
    expiresAt: null,
    createdAt: at,
    metadata: { name: 'From code-service' },
  });

  it('answers the signer’s projected codes without code-service, asks it for a miss, and falls back to the read model when it is down', async () => {
    await reset();
    await ensureOperator({ db, eventStore: store }, `svc_live_${'a'.repeat(64)}`, new Date(at));
    const claim = newGtinClaim(
      { accountId: brand.accountId, environment: 'live', target: { kind: 'gtin', value: gtin }, source: 'granted' },
      new Date(at),
    );
    await db.transaction((sql) => insertGtinClaim(sql, claim, 'test'));
    const ownCode = codeStream(brand, 'D-1', { name: 'Tonic' });
    const rivalCode = codeStream(rival, 'D-1', { name: 'Fake tonic' });
    const rivalOnly = codeStream(rival, 'D-2');
    const all = [ownCode, rivalCode, rivalOnly];
    await storeCodes(all);
    const projection = createCodeProjection(db);
    await projection.checkpoints.load(codeDirectoryProjectionName);
    const page = await readThrough(`asset-${rivalOnly.assetId}`);
    await projection.handle(page.events, page.cursor);

    const bus = createInProcessBus();
    const asked: string[] = [];
    const fallbacks: string[] = [];
    const directory = createCodeDirectory(
      bus,
      { db, signers: createGtinSigners(db) },
      { timeoutMs: 1_000, missCacheMs: 0, onFallback: (error) => fallbacks.push(error.code) },
    );

    // code-service is not running at all: the projected code of the GTIN's owner is found, the rival's is not.
    expect(await directory.findItem('live', gtin, 'D-1', 'r1')).toEqual({
      signerAccountId: brand.accountId,
      codes: [expect.objectContaining({ assetId: ownCode.assetId, accountId: brand.accountId, metadata: { name: 'Tonic' } })],
      fromCodeService: false,
    });
    expect(fallbacks).toEqual([]);
    // An item only the rival has codes for: a miss; code-service is down, so the read model answers: none.
    // Not code-service's word: none issued is not known (a signing key then still vouches, as in the lag).
    expect(await directory.findItem('live', gtin, 'D-2', 'r2')).toEqual({
      signerAccountId: brand.accountId,
      codes: [],
      fromCodeService: false,
    });
    expect(fallbacks).toEqual(['SERVICE_UNAVAILABLE']);

    // With code-service up, a miss (a code the projection has not reached yet) is asked of it.
    const served = await bus.serve(rpcSubject(findCodesRpc), { queue: 'code-service' }, async (payload) => {
      asked.push((payload as { serial: string }).serial);
      return { signerAccountId: brand.accountId, codes: [item('code_fresh', brand.accountId)] };
    });
    try {
      expect(await directory.findItem('live', gtin, 'D-3', 'r3')).toEqual({
        signerAccountId: brand.accountId,
        codes: [item('code_fresh', brand.accountId)],
        fromCodeService: true,
      });
      // A projected code is not asked of code-service; a cached one costs nothing.
      await directory.findItem('live', gtin, 'D-1', 'r4');
      expect(asked).toEqual(['D-3']);
    } finally {
      await served.stop();
    }
  });

  // The cache was cleared whole when full: anyone scanning made-up serials emptied every tenant's
  // cached codes. Now what expired goes first, then the entries remembered first.
  it('keeps the codes it found when made-up serials fill its memory', async () => {
    const bus = createInProcessBus();
    const asked: string[] = [];
    const directory = createCodeDirectory(
      bus,
      { db, signers: createGtinSigners(db) },
      { timeoutMs: 1_000, missCacheMs: 0, maxItems: 10 },
    );
    const served = await bus.serve(rpcSubject(findCodesRpc), { queue: 'code-service' }, async (payload) => {
      const { serial } = payload as { serial: string };
      asked.push(serial);
      return {
        signerAccountId: brand.accountId,
        codes: serial.startsWith('MADE-UP') ? [] : [item(`code_${serial}`, brand.accountId)],
      };
    });
    try {
      await directory.findItem('live', gtin, 'KEPT', 'k1');
      for (let i = 0; i < 30; i++) await directory.findItem('live', gtin, `MADE-UP-${i}`, `m${i}`);
      await directory.findItem('live', gtin, 'KEPT', 'k2');
      expect(asked.filter((serial) => serial === 'KEPT')).toHaveLength(1);
    } finally {
      await served.stop();
    }
  });
});
