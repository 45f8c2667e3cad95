// Auction transfers, provenance and photos in the distributed form with
// replicas (two gateways, two auction-service replicas), from a review of 2026-12-05: a confirm whose first answer was
// lost to a gateway timeout while its sale went through, a replica killed while a confirm's sale was
// being written, wrong codes spread over both gateways, cancels racing right codes through different
// gateways, and one object written at once by provenance events, photo bindings and transfers.
import { randomUUID } from 'node:crypto';
import { createPostgresDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { type ApiResponse, call } from '../support/embedded.ts';
import { picture } from '../support/pictures.ts';
import { sqlOnce } from '../support/sql-once.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

/** gateway-1 gives up on a service after this long (gateway-2 keeps the default 5 s). */
const shortTimeoutMs = 1_500;
/** The photo bytes each account may store (HALLMARK_PHOTO_BYTES_PER_ACCOUNT). */
const photoRoom = 400_000;

let product: DistributedProduct;
let house: string;
let db: SqlDatabase;

const gateway = (i: number) => (product.gatewayUrls as string[])[i % 2] as string;
const api = (i: number, method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(gateway(i), method, `/api/v1${path}`, options);
const tally = (answers: ApiResponse<Json>[]) =>
  JSON.stringify(answers.map((answer) => [answer.status, answer.body?.error?.code ?? null, answer.body?.error?.details?.status]));

async function register(title: string, ownerId = 'client-jane', key = house) {
  const registered = await api(1, 'POST', '/auction/objects/register', {
    key,
    body: { title, category: 'watch', ownerId },
  });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  return registered.body.object as { id: string; service_serial: string };
}

async function initiate(objectId: string, through = 1, toOwnerId = 'buyer-omar', fromOwnerId = 'client-jane') {
  const started = await api(through, 'POST', '/auction/transfers/initiate', {
    key: house,
    body: { objectId, fromOwnerId, toOwnerId, salePrice: 18_500, saleCurrency: 'EUR' },
  });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return started.body as { transferId: string; transferCode: string };
}

async function historyOf(objectId: string) {
  const history = await api(1, 'GET', `/auction/objects/${objectId}/provenance`, { key: house });
  expect(history.status, JSON.stringify(history.body)).toBe(200);
  return history.body as { chain_valid: boolean; events: Json[]; chain_of_custody: Json[] };
}

/**
 * Runs `work` while a transaction of the test holds `lockSql` (a row lock), then lets it go: what
 * the product does on that row waits meanwhile, as it would behind a slow disk or a long vacuum.
 */
async function whileLocked<T>(lockSql: string, params: unknown[], work: () => Promise<T>): Promise<T> {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked: () => void = () => {};
  const holding = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const transaction = db.transaction(async (tx) => {
    const rows = await tx.query(lockSql, params);
    expect(rows.length).toBe(1);
    locked();
    await released;
  });
  await Promise.race([holding, transaction]);
  try {
    return await work();
  } finally {
    release();
    await transaction;
  }
}

/** Waits until some statement of the product waits for a row lock on `table`. */
const blockedOn = (table: string) =>
  waitFor(`a statement blocked on ${table}`, async () => {
    const rows = await sqlOnce<{ query: string }>(
      product.databaseUrl,
      `SELECT query FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE $1`,
      [`%${table}%`],
    );
    return rows.length > 0 ? rows : undefined;
  });

async function uploadPhoto(through: number, objectId: string, angle: string, bytes: Buffer, key = house) {
  const form = new FormData();
  form.append('angle', angle);
  form.append('photo', new Blob([bytes], { type: 'image/jpeg' }), 'photo.jpg');
  const response = await fetch(`${gateway(through)}/api/v1/auction/objects/${objectId}/photos`, {
    method: 'POST',
    headers: { 'x-api-key': key },
    body: form,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : {}) as Json };
}

describe('auction objects on two gateways and two auction-service replicas', () => {
  beforeAll(async () => {
    product = await startDistributedProduct(
      { HALLMARK_PHOTO_BYTES_PER_ACCOUNT: String(photoRoom) },
      {
        gateways: 2,
        replicas: { 'auction-service': 2 },
        gatewayEnv: [{ HALLMARK_REQUEST_TIMEOUT_MS: String(shortTimeoutMs) }, {}],
      },
    );
    db = createPostgresDatabase({ connectionString: product.databaseUrl, maxConnections: 2 });
    const created = await api(1, 'POST', '/accounts', {
      key: product.operatorKey,
      body: { name: `Review house ${randomUUID().slice(0, 6)}`, tier: 'enterprise' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    house = created.body.apiKey.secret;
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    await product?.stop();
  }, 60_000);

  it('answers a keyed confirm, retried after its first attempt timed out but sold the object, with that sale (200), not 409', async () => {
    const object = await register('Lost answer lot');
    const { transferId, transferCode } = await initiate(object.id);
    const idempotencyKey = `confirm-${randomUUID()}`;
    const confirm = (through: number) =>
      api(through, 'POST', `/auction/transfers/${transferId}/confirm`, {
        key: house,
        headers: { 'idempotency-key': idempotencyKey },
        body: { transferCode },
      });
    // The transfer's row is busy for longer than gateway-1 waits: its confirm answers 503, and the
    // auction-service replica goes on and completes the sale once the row is free.
    const first = await whileLocked('SELECT id FROM auction_transfers WHERE id = $1 FOR UPDATE', [transferId], async () => {
      const answer = confirm(0);
      await blockedOn('auction_transfers');
      return answer;
    });
    expect(first.status, JSON.stringify(first.body)).toBe(503);
    await waitFor('the sale the first confirm made', async () =>
      (await historyOf(object.id)).events.some((event) => event.type === 'transferred') ? true : undefined,
    );
    // The buyer's client retries the same request with the same Idempotency-Key, as docs/API.md
    // ("Idempotency-Key") tells it to: the confirm that sold the object is its own.
    const retry = await confirm(1);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body).toMatchObject({ transferId, status: 'completed', objectId: object.id, objectStatus: 'sold' });
    const history = await historyOf(object.id);
    expect(history.events.map((event) => event.type)).toEqual(['registered', 'transfer_initiated', 'sold', 'transferred']);
  }, 60_000);

  it('moves ownership once and whole when both auction-service replicas are killed while a confirm writes the sale', async () => {
    const object = await register('Killed mid-sale lot');
    const { transferId, transferCode } = await initiate(object.id);
    // The confirm has taken its try and is appending `sold` and `transferred` with the read models
    // when the object's row is found busy; both replicas die there.
    const first = await whileLocked('SELECT id FROM auction_objects WHERE id = $1 FOR UPDATE', [object.id], async () => {
      const answer = api(1, 'POST', `/auction/transfers/${transferId}/confirm`, { key: house, body: { transferCode } });
      await blockedOn('auction_objects');
      await Promise.all([product.kill('auction-service-1'), product.kill('auction-service-2')]);
      return answer;
    });
    expect([503], JSON.stringify(first.body)).toContain(first.status);
    // Nothing of the sale is left half-written while no replica runs.
    const [row] = await sqlOnce<{ owner_id: string; status: string }>(
      product.databaseUrl,
      'SELECT owner_id, status FROM auction_objects WHERE id = $1',
      [object.id],
    );
    expect(row).toEqual({ owner_id: 'client-jane', status: 'consigned' });
    await Promise.all([product.restart('auction-service-1'), product.restart('auction-service-2')]);
    // Every RPC is served again once the last one subscribed (the dashboard) answers.
    await waitFor(
      'auction-service to serve again',
      async () => ((await api(0, 'GET', '/auction/dashboard/objects?limit=1', { key: house })).status === 200 ? true : undefined),
      { timeoutMs: 60_000 },
    );
    let history = await historyOf(object.id);
    expect(history.events.map((event) => event.type)).toEqual(['registered', 'transfer_initiated']);
    // The buyer confirms again (its first try was spent by the killed confirm; four are left).
    const again = await api(0, 'POST', `/auction/transfers/${transferId}/confirm`, { key: house, body: { transferCode } });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ status: 'completed', objectStatus: 'sold' });
    history = await historyOf(object.id);
    expect(history.chain_valid).toBe(true);
    expect(history.events.map((event) => event.type)).toEqual(['registered', 'transfer_initiated', 'sold', 'transferred']);
    expect(history.chain_of_custody.map((entry) => [entry.from, entry.to])).toEqual([
      [null, 'client-jane'],
      ['client-jane', 'buyer-omar'],
    ]);
    // The old owner cannot sell it again; the new one can, through either gateway.
    const oldOwner = await api(0, 'POST', '/auction/transfers/initiate', {
      key: house,
      body: { objectId: object.id, fromOwnerId: 'client-jane', toOwnerId: 'buyer-x', salePrice: 1, saleCurrency: 'EUR' },
    });
    expect(oldOwner.status, JSON.stringify(oldOwner.body)).toBe(409);
    await initiate(object.id, 0, 'buyer-y', 'buyer-omar');
    const verified = await api(0, 'GET', `/compliance/${object.id}/verify`, { key: house });
    expect(verified.body, JSON.stringify(verified.body)).toMatchObject({ isValid: true, eventCount: 5 });
  }, 120_000);

  it('counts wrong codes sent through both gateways against one limit of five, and locks out the right code after', async () => {
    const object = await register('Guessed lot');
    const { transferId, transferCode } = await initiate(object.id);
    const wrong = Array.from({ length: 7 }, (_, i) =>
      String((Number(transferCode) + 1 + i * 104_729) % 1_000_000).padStart(6, '0'),
    );
    const remaining: unknown[] = [];
    for (const [i, code] of wrong.slice(0, 5).entries()) {
      const answer = await api(i, 'POST', `/auction/transfers/${transferId}/confirm`, {
        key: house,
        body: { transferCode: code },
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      remaining.push(answer.body.error?.details?.attemptsRemaining);
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    for (const i of [0, 1]) {
      const right = await api(i, 'POST', `/auction/transfers/${transferId}/confirm`, { key: house, body: { transferCode } });
      expect(right.status, JSON.stringify(right.body)).toBe(409);
      expect(right.body.error?.details?.status).toBe('locked');
    }
    const history = await historyOf(object.id);
    expect(history.events.map((event) => event.type)).toEqual(['registered', 'transfer_initiated', 'transfer_locked']);
    expect(history.chain_of_custody).toHaveLength(1);
  }, 60_000);

  it('of a cancel and the right code sent at once through different gateways, exactly one wins, round after round', async () => {
    const object = await register('Cancel race lot');
    for (const round of [0, 1, 2, 3]) {
      const { transferId, transferCode } = await initiate(object.id, round);
      const [cancelled, confirmed] = await Promise.all([
        api(round, 'POST', `/auction/transfers/${transferId}/cancel`, { key: house }),
        api(round + 1, 'POST', `/auction/transfers/${transferId}/confirm`, { key: house, body: { transferCode } }),
      ]);
      const answers = tally([cancelled, confirmed]);
      expect([cancelled.status, confirmed.status].sort(), answers).toEqual([200, 409]);
      if (confirmed.status === 200) {
        expect(cancelled.body.error?.details?.status, answers).toBe('completed');
        const history = await historyOf(object.id);
        expect(history.events.at(-1)?.type).toBe('transferred');
        expect(history.chain_valid).toBe(true);
        return;
      }
      expect(confirmed.body.error?.details?.status, answers).toBe('cancelled');
    }
    const history = await historyOf(object.id);
    expect(history.chain_valid).toBe(true);
    expect(history.events.filter((event) => event.type === 'transferred')).toHaveLength(0);
  }, 60_000);

  it('keeps one linear chain when events, photos and transfers hit one object through both gateways and replicas at once', async () => {
    const object = await register('Busy lot');
    const angles = ['dial', 'movement', 'serial_engraving', 'case_back'];
    const photos = await Promise.all(angles.map((_, i) => picture(9_100 + i, { side: 200 })));
    const { transferId } = await initiate(object.id);
    const writes = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) =>
        api(i, 'POST', '/auction/provenance/events', {
          key: house,
          body: { objectId: object.id, eventType: 'cataloged', actorRole: 'auction_house', description: `note ${i}` },
        }),
      ),
      ...angles.map((angle, i) => uploadPhoto(i + 1, object.id, angle, photos[i] as Buffer)),
      api(0, 'POST', `/auction/transfers/${transferId}/cancel`, { key: house }),
      api(1, 'POST', `/auction/transfers/${transferId}/cancel`, { key: house }),
    ]);
    for (const answer of writes) {
      expect([200, 201, 409, 503], JSON.stringify(answer.body)).toContain(answer.status);
      if (answer.status >= 400) expect(typeof answer.body.error?.code).toBe('string');
    }
    const notes = writes.slice(0, 10).filter((answer) => answer.status === 201);
    const bound = writes.slice(10, 14).filter((answer) => answer.status === 201);
    // Gateway 0 waits 1.5 s (shortTimeoutMs): on a loaded machine a write through it can be answered
    // 503 `timeout` while its replica still stores it, as the answer says (its outcome is unknown).
    const unknownOutcome = (answers: ApiResponse<Json>[]) =>
      answers.filter((answer) => answer.status === 503 && answer.body.error?.details?.reason === 'timeout').length;
    const notesMaybe = unknownOutcome(writes.slice(0, 10));
    const boundMaybe = unknownOutcome(writes.slice(10, 14));
    // A cancel answered 503 `timeout` (its outcome unknown) is sent again, as a client would: a
    // cancel repeated is answered 200 (the CI of 29cc92d had one cancel time out through gateway 0).
    const cancels = await Promise.all(
      writes.slice(14).map(async (answer, gateway) => {
        let last = answer;
        for (let retry = 0; retry < 5 && last.status === 503 && last.body.error?.details?.reason === 'timeout'; retry++)
          last = await api(gateway, 'POST', `/auction/transfers/${transferId}/cancel`, { key: house });
        return last;
      }),
    );
    expect(
      cancels.map((answer) => answer.status),
      tally(cancels),
    ).toEqual([200, 200]);
    const positions = notes.map((answer) => answer.body.position as number);
    expect(new Set(positions).size, JSON.stringify(positions)).toBe(positions.length);
    // A write answered 503 `timeout` may still be stored after that answer, so the history and the
    // export are read until they hold the same events (a late write in one read and not the other
    // failed the CI of d2c3e1c: 16 events against 17); an event in one that never reaches the other
    // still fails here, when the wait runs out.
    const { history, exported } = await waitFor('the history and the export to hold the same events', async () => {
      const answer = await api(0, 'GET', `/compliance/${object.id}/export?format=json`, { key: house });
      if (answer.status !== 200) return undefined;
      const read = await historyOf(object.id);
      return (answer.body.events as Json[]).length === read.events.length ? { history: read, exported: answer } : undefined;
    });
    expect(history.chain_valid).toBe(true);
    const types = history.events.map((event) => event.type);
    expect(types.filter((type) => type === 'transfer_cancelled')).toHaveLength(1);
    const cataloged = types.filter((type) => type === 'cataloged').length;
    const photographed = types.filter((type) => type === 'photographed').length;
    expect(cataloged, tally(writes)).toBeGreaterThanOrEqual(notes.length);
    expect(cataloged, tally(writes)).toBeLessThanOrEqual(notes.length + notesMaybe);
    expect(photographed, tally(writes)).toBeGreaterThanOrEqual(bound.length);
    expect(photographed, tally(writes)).toBeLessThanOrEqual(bound.length + boundMaybe);
    const chain = exported.body.events as Json[];
    expect(chain).toHaveLength(types.length);
    expect(chain.map((event) => event.leafIndex)).toEqual(chain.map((_, i) => i));
    for (let i = 1; i < chain.length; i++) expect(chain[i]?.prevHash).toBe(chain[i - 1]?.hash);
    // The dashboard's row agrees with the stream, whichever replica wrote last.
    const dashboard = await api(0, 'GET', '/auction/dashboard/objects?limit=100', { key: house });
    const entry = (dashboard.body.objects as Json[]).find((candidate) => candidate.serial === object.service_serial);
    expect(entry?.photo_status?.count, JSON.stringify(entry)).toBe(photographed);
    // And the object is free for a new transfer at once.
    await initiate(object.id, 0);
  }, 120_000);

  it('binds one picture once when it is sent for two angles of one object at once, through both gateways', async () => {
    for (const round of [0, 1, 2]) {
      const object = await register(`Same picture lot ${round}`);
      const bytes = await picture(9_300 + round, { side: 240 });
      const answers = await Promise.all([
        uploadPhoto(round, object.id, 'dial', bytes),
        uploadPhoto(round + 1, object.id, 'case_back', bytes),
      ]);
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses, JSON.stringify(answers.map((answer) => answer.body))).toEqual([201, 409]);
      const history = await historyOf(object.id);
      expect(history.events.filter((event) => event.type === 'photographed')).toHaveLength(1);
    }
  }, 60_000);

  it('keeps an account within its photo room when its uploads arrive at once through both gateways and both replicas', async () => {
    const created = await api(0, 'POST', '/accounts', {
      key: product.operatorKey,
      body: { name: `Photo room ${randomUUID().slice(0, 6)}`, tier: 'enterprise' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const key = created.body.apiKey.secret as string;
    const objects = [await register('Room lot A', 'client-jane', key), await register('Room lot B', 'client-jane', key)];
    const angles = ['dial', 'movement', 'serial_engraving', 'case_back'];
    const photos = await Promise.all(Array.from({ length: 8 }, (_, i) => picture(9_500 + i, { side: 900 })));
    const total = photos.reduce((sum, bytes) => sum + bytes.length, 0);
    // Each fits alone; all of them do not.
    expect(Math.max(...photos.map((bytes) => bytes.length))).toBeLessThan(photoRoom);
    expect(total, `photos of ${photos.map((bytes) => bytes.length)}`).toBeGreaterThan(photoRoom * 1.5);
    const answers = await Promise.all(
      photos.map((bytes, i) =>
        uploadPhoto(i, (objects[i % 2] as { id: string }).id, angles[Math.floor(i / 2)] as string, bytes, key),
      ),
    );
    for (const answer of answers) expect([201, 413, 503], JSON.stringify(answer.body)).toContain(answer.status);
    // The room was reached: some uploads were refused for it.
    expect(
      answers.some((answer) => answer.status === 413),
      JSON.stringify(answers.map((answer) => answer.status)),
    ).toBe(true);
    const stored = photos.filter((_, i) => answers[i]?.status === 201);
    expect(stored.length, JSON.stringify(answers.map((answer) => answer.status))).toBeGreaterThan(0);
    const used = stored.reduce((sum, bytes) => sum + bytes.length, 0);
    expect(used, JSON.stringify(answers.map((answer) => answer.status))).toBeLessThanOrEqual(photoRoom);
    // What the next upload is told it holds is what was bound.
    const next = await uploadPhoto(0, (objects[0] as { id: string }).id, 'dial', photos[7] as Buffer, key);
    if (next.status === 413) expect(next.body.error?.details?.usedBytes).toBe(used);
  }, 90_000);
});
