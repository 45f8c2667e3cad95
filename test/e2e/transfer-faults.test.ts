import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// Issue #17: a transfer must never hold an object for ever. A confirm cut off by a kill and a
// transfer that expired unconfirmed used to leave every later confirm and every new transfer at 409.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let house: string;

const api = <T = Json>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(t.url, method, `/api/v1${path}`, options);

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

async function register(title: string): Promise<Json> {
  const registered = await api('POST', '/auction/objects/register', {
    key: house,
    body: { title, category: 'watch', ownerId: 'client-jane' },
  });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  return registered.body.object;
}

const initiate = (objectId: string, fromOwnerId = 'client-jane', toOwnerId = 'buyer-1') =>
  api('POST', '/auction/transfers/initiate', {
    key: house,
    body: { objectId, fromOwnerId, toOwnerId, salePrice: 900, saleCurrency: 'EUR' },
  });

/** Jane's sale of the object to buyer-1, sent with this Idempotency-Key: each call is the same request again. */
const keyedInitiate = (objectId: string, idempotencyKey: string) => () =>
  api('POST', '/auction/transfers/initiate', {
    key: house,
    headers: { 'idempotency-key': idempotencyKey },
    body: { objectId, fromOwnerId: 'client-jane', toOwnerId: 'buyer-1', salePrice: 900, saleCurrency: 'EUR' },
  });

const confirm = (transferId: string, transferCode: string) =>
  api('POST', `/auction/transfers/${transferId}/confirm`, { key: house, body: { transferCode } });

const historyOf = async (objectId: string) => (await api('GET', `/auction/objects/${objectId}/provenance`, { key: house })).body;

const transferRow = async (transferId: string) =>
  (
    await t.product.db.query<{ status: string; attempts: number; completed_at: unknown }>(
      'SELECT status, attempts, completed_at FROM auction_transfers WHERE id = $1',
      [transferId],
    )
  )[0];

beforeAll(async () => {
  t = await startTestProduct();
  const operator = t.product.generatedOperatorKey as string;
  const created = await api('POST', '/accounts', { key: operator, body: { name: 'Maison Faults', tier: 'enterprise' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  house = created.body.apiKey.secret;
});

afterAll(async () => {
  await t?.stop();
});

describe('transfers under faults', () => {
  it('an expired transfer does not block a new one, and the new one completes', async () => {
    const object = await register('Expiring lot');
    const first = await initiate(object.id);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expectError(await initiate(object.id), 409, 'CONFLICT');

    // 72 hours and a second later the first code is dead; it must not hold the object.
    t.clock.advance(72 * 3_600_000 + 1_000);
    const second = await initiate(object.id, 'client-jane', 'buyer-2');
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    expectError(await confirm(first.body.transferId, first.body.transferCode), 410, 'GONE');
    expect((await transferRow(first.body.transferId))?.status).toBe('expired');

    const done = await confirm(second.body.transferId, second.body.transferCode);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({ status: 'completed', objectStatus: 'sold' });

    const history = await historyOf(object.id);
    expect(history.chain_valid).toBe(true);
    expect(history.events.map((entry: { type: string }) => entry.type)).toEqual([
      'registered',
      'transfer_initiated',
      'transfer_expired',
      'transfer_initiated',
      'sold',
      'transferred',
    ]);
    expect(history.chain_of_custody.at(-1)).toMatchObject({ from: 'client-jane', to: 'buyer-2', transfer_type: 'sale' });
  });

  it('an initiate whose answer was lost after it acted is answered again on retry: same transfer, same code', async () => {
    const object = await register('Lost answer lot');
    const send = keyedInitiate(object.id, `lost-${object.id}`);
    const first = await send();
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    // The gateway died after auction-service acted and before it stored the answer: its
    // idempotency record is gone (as after an expired lease), the transfer is in the stream.
    await t.product.db.query('DELETE FROM idempotent_requests');
    const retried = await send();
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.body).toEqual(first.body);
    // Without the key, it is another transfer, which the pending one refuses.
    expectError(await initiate(object.id), 409, 'CONFLICT');

    const done = await confirm(retried.body.transferId, retried.body.transferCode);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const history = await historyOf(object.id);
    expect(history.events.map((entry: { type: string }) => entry.type)).toEqual([
      'registered',
      'transfer_initiated',
      'sold',
      'transferred',
    ]);
    // Once the transfer is done, the same key cannot start it again.
    await t.product.db.query('DELETE FROM idempotent_requests');
    expectError(await send(), 409, 'CONFLICT');
  });

  it('a keyed initiate retried after its fifth wrong code (the lock cut off) is refused, not answered with a dead code', async () => {
    const object = await register('Guessed lot');
    const send = keyedInitiate(object.id, `guessed-${object.id}`);
    const first = await send();
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const { transferId, transferCode } = first.body;
    const wrongCode = transferCode === '000000' ? '111111' : '000000';
    for (let i = 0; i < 4; i += 1) expectError(await confirm(transferId, wrongCode), 400, 'VALIDATION_ERROR');
    // The fifth wrong code's confirm killed after it took its try and counted it, before the lock was
    // appended; and the gateway has forgotten the key (an expired lease).
    await t.product.db.query('UPDATE auction_transfers SET attempts = 5, tries = 5 WHERE id = $1', [transferId]);
    await t.product.db.query('DELETE FROM idempotent_requests');

    const retried = await send();
    expectError(retried, 409, 'CONFLICT');
    expect(retried.body.error?.details).toMatchObject({ transferId, status: 'locked' });
    expect(JSON.stringify(retried.body)).not.toContain(transferCode);
    // The code it would have answered takes nothing.
    const refused = await confirm(transferId, transferCode);
    expectError(refused, 409, 'CONFLICT');
    expect(refused.body.error?.details).toMatchObject({ status: 'locked' });
    // The seller starts again without the key: the lock is recorded first, and the new transfer completes.
    const next = await initiate(object.id);
    expect(next.status, JSON.stringify(next.body)).toBe(201);
    expect((await transferRow(transferId))?.status).toBe('locked');
    expect((await confirm(next.body.transferId, next.body.transferCode)).status).toBe(200);
    const history = await historyOf(object.id);
    expect(history.chain_valid).toBe(true);
    expect(history.events.map((entry: { type: string }) => entry.type)).toEqual([
      'registered',
      'transfer_initiated',
      'transfer_locked',
      'transfer_initiated',
      'sold',
      'transferred',
    ]);
  });

  it('a transfer past its expiry with its fifth wrong code counted (the lock cut off) is answered expired, and recorded so', async () => {
    const object = await register('Guessed and forgotten lot');
    const started = await initiate(object.id);
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const { transferId, transferCode } = started.body;
    // The fifth wrong code's confirm killed after it counted, before the lock was appended.
    await t.product.db.query('UPDATE auction_transfers SET attempts = 5, tries = 5 WHERE id = $1', [transferId]);
    const locked = await confirm(transferId, transferCode);
    expectError(locked, 409, 'CONFLICT');
    expect(locked.body.error?.details).toMatchObject({ status: 'locked' });
    // 72 hours later no try is left either, but the transfer has expired: that is its answer and its recorded end.
    t.clock.advance(72 * 3_600_000 + 1_000);
    expectError(await confirm(transferId, transferCode), 410, 'GONE');
    expect((await transferRow(transferId))?.status).toBe('expired');
    expect((await historyOf(object.id)).events.map((entry: { type: string }) => entry.type)).toEqual([
      'registered',
      'transfer_initiated',
      'transfer_expired',
    ]);
    expect((await initiate(object.id)).status).toBe(201);
  });

  it('a confirm expired on its own (no one started a new one) frees the object too', async () => {
    const object = await register('Forgotten lot');
    const first = await initiate(object.id);
    t.clock.advance(72 * 3_600_000 + 1_000);
    expectError(await confirm(first.body.transferId, first.body.transferCode), 410, 'GONE');
    expectError(await confirm(first.body.transferId, first.body.transferCode), 410, 'GONE');
    expect((await initiate(object.id)).status).toBe(201);
  });

  it('a confirm cut off after it claimed the transfer (row left "completing") completes when retried', async () => {
    const object = await register('Cut-off lot');
    const started = await initiate(object.id);
    expect(started.status).toBe(201);
    // What the kill left behind: the claim written, nothing appended to the object's history.
    await t.product.db.query(`UPDATE auction_transfers SET status = 'completing' WHERE id = $1`, [started.body.transferId]);

    const retried = await confirm(started.body.transferId, started.body.transferCode);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body).toMatchObject({ status: 'completed', objectStatus: 'sold' });
    expect((await transferRow(started.body.transferId))?.status).toBe('completed');
    expect((await initiate(object.id, 'buyer-1', 'buyer-9')).status).toBe(201);
  });

  it('a confirm cut off after its sale was recorded is completed on the next request, and the object can be sold on', async () => {
    const object = await register('Half-recorded lot');
    const started = await initiate(object.id);
    expect((await confirm(started.body.transferId, started.body.transferCode)).status).toBe(200);
    // What a kill between the append and the read models leaves: the history says sold, the rows do not.
    await t.product.db.query(`UPDATE auction_transfers SET status = 'pending', completed_at = NULL WHERE id = $1`, [
      started.body.transferId,
    ]);
    await t.product.db.query(
      `UPDATE auction_objects SET status = 'consigned', owner_id = 'client-jane', stream_version = stream_version - 2 WHERE id = $1`,
      [object.id],
    );

    const again = await confirm(started.body.transferId, started.body.transferCode);
    expectError(again, 409, 'CONFLICT');
    expect(again.body.error?.details).toMatchObject({ status: 'completed' });
    const row = await transferRow(started.body.transferId);
    expect(row?.status).toBe('completed');
    expect(row?.completed_at).not.toBeNull();
    const sold = await api('GET', '/auction/dashboard/objects?status=sold&limit=100', { key: house });
    expect(sold.body.objects.map((entry: { serial: string }) => entry.serial)).toContain(object.service_serial);

    // The new owner can sell on; the old one cannot.
    expectError(await initiate(object.id, 'client-jane', 'buyer-7'), 409, 'CONFLICT');
    expect((await initiate(object.id, 'buyer-1', 'buyer-7')).status).toBe(201);
  });

  it('keeps wrong attempts out of the public history, and counts each of two racing wrong codes', async () => {
    const object = await register('Guarded lot');
    const started = await initiate(object.id);
    const wrong = started.body.transferCode === '000000' ? '111111' : '000000';
    const answers = await Promise.all([confirm(started.body.transferId, wrong), confirm(started.body.transferId, wrong)]);
    expect(answers.map((answer) => answer.status)).toEqual([400, 400]);
    expect(answers.map((answer) => answer.body.error?.details?.attemptsRemaining).sort()).toEqual([3, 4]);
    expect((await transferRow(started.body.transferId))?.attempts).toBe(2);

    const history = await historyOf(object.id);
    expect(history.events.map((entry: { type: string }) => entry.type)).toEqual(['registered', 'transfer_initiated']);
    const text = JSON.stringify(history);
    expect(text).not.toContain('attempt');
    expect((await confirm(started.body.transferId, started.body.transferCode)).status).toBe(200);
  });
});
