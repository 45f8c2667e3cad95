// Idempotency-Key and quotas, distributed form (two gateways, two code-service replicas), from a
// review of 2026-12-05. One Idempotency-Key raced through both gateways for generate and batch; the
// key with another body through the other gateway; the key reused by another API key of the account
// and by another account; the day's generate quota raced by keyed batches through both gateways; a
// keyed batch larger than what the day has left (docs/API.md, Idempotency-Key and Quotas). Then a
// gateway that stalls (SIGSTOP: a long pause, a VM freeze) while it holds a keyed batch's claim: it
// loses its lease, and the retry through the other gateway takes the key over with the whole batch
// prepaid and spends nothing. When the stalled gateway woke up, it settled its quota as if it were
// still the key's only attempt, giving back the items it never sent or found made (by the retry),
// though the retry relied on those units: the day's quota did not count codes that exist. It now
// keeps what it noted as paid. And a gateway killed after code-service stored its batch.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, freshGtin } from '../support/accounts.ts';
import { earlyInWindow } from '../support/client-address.ts';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { type ApiResponse, call } from '../support/embedded.ts';
import { sqlOnce } from '../support/sql-once.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let product: DistributedProduct;
const gateway = (i: number) => (product.gatewayUrls as string[])[i % 2] as string;
const api = (i: number, method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(gateway(i), method, `/api/v1${path}`, options);
const sql = <T = Json>(text: string, params: unknown[] = []) => sqlOnce<T>(product.databaseUrl, text, params);

/** An account of `tier` made through the first gateway, granted `gtin` through the second. */
const newAccount = (tier: 'free' | 'starter', gtin?: string) =>
  createAccount(gateway(0), product.operatorKey, { tier, ...(gtin ? { gtin } : {}), grantVia: gateway(1) });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const codesOf = async (accountId: string) =>
  Number((await sql<{ n: string }>('SELECT count(*) AS n FROM codes WHERE account_id = $1', [accountId]))[0]?.n);
const generateUsed = async (key: string) =>
  (await api(1, 'GET', '/usage', { key })).body.quotas?.find((quota: Json) => quota.name === 'generate')?.used as number;
const tally = (answers: ApiResponse<Json>[]) =>
  JSON.stringify(answers.map((answer) => [answer.status, answer.body?.error?.code ?? null]));
/** Waits until the account's keyed attempt has noted on its key what it paid: its spend is done, its work on its way. */
const spendNoted = (accountId: string) =>
  waitFor(
    'the first attempt to note its spend',
    async () => {
      const [row] = await sql<{ prepaid: unknown }>('SELECT prepaid FROM idempotent_requests WHERE account_id = $1', [accountId]);
      return row?.prepaid ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 20 },
  );
/**
 * Waits until the account's keyed attempt no longer holds its key (its lease lapsed: the gateway that
 * renewed it is gone), so a retry takes the key over instead of being answered 409. At most 10 s, and
 * fails nothing itself: the retry's answer says whether it could.
 */
const leaseLapsed = (accountId: string) =>
  waitFor(
    'the dead attempt’s lease to lapse',
    async () => {
      const [row] = await sql<{ lease_until: Date | string | null }>(
        'SELECT lease_until FROM idempotent_requests WHERE account_id = $1',
        [accountId],
      );
      return row?.lease_until === null || (row && new Date(row.lease_until).getTime() < Date.now()) ? true : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 50 },
  ).catch(() => undefined);
const keyed = (key: string, idempotencyKey: string, body: unknown) => ({
  key,
  headers: { 'idempotency-key': idempotencyKey },
  body,
});

beforeAll(async () => {
  product = await startDistributedProduct(
    { HALLMARK_IDEMPOTENCY_LEASE_MS: '1500' },
    { gateways: 2, replicas: { 'code-service': 2 } },
  );
}, 120_000);
afterAll(async () => {
  for (const name of product?.processNames() ?? []) product.process(name).child.kill('SIGCONT');
  await product?.stop();
}, 60_000);

describe('one Idempotency-Key through two gateways and two code-service replicas', () => {
  it('makes a keyed batch sent at once through both gateways once, answers every 200 alike, and charges it once', async () => {
    await earlyInWindow(86_400_000, 60_000);
    const gtin = freshGtin();
    const brand = await newAccount('starter', gtin);
    const items = Array.from({ length: 40 }, (_, i) => ({ gtin, serialNumber: `RB-${i}` }));
    const idempotencyKey = `race-batch-${randomUUID()}`;
    const race = await Promise.all(
      Array.from({ length: 6 }, (_, i) => api(i, 'POST', '/code/generate/batch', keyed(brand.key, idempotencyKey, { items }))),
    );
    const made = race.filter((answer) => answer.status === 200);
    expect(made.length, tally(race)).toBeGreaterThanOrEqual(1);
    for (const answer of race.filter((answer) => answer.status !== 200)) {
      expect(answer.status, tally(race)).toBe(409);
      expect(answer.body.error?.code).toBe('CONFLICT');
      expect(answer.headers.get('retry-after')).toBe('1');
    }
    const first = JSON.stringify(made[0]?.body);
    for (const answer of made) expect(JSON.stringify(answer.body)).toBe(first);
    expect(made[0]?.body.results.filter((result: Json) => result.code)).toHaveLength(items.length);
    // Once settled, each gateway replays the same answer, spending nothing.
    for (const i of [0, 1]) {
      const retry = await api(i, 'POST', '/code/generate/batch', keyed(brand.key, idempotencyKey, { items }));
      expect(retry.status).toBe(200);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(JSON.stringify(retry.body)).toBe(first);
    }
    expect(await codesOf(brand.id)).toBe(items.length);
    expect(await generateUsed(brand.key)).toBe(items.length);
  }, 60_000);

  it('refuses the key with another body through the other gateway, at once and after: 422, nothing made for it', async () => {
    await earlyInWindow(86_400_000, 60_000);
    const gtin = freshGtin();
    const brand = await newAccount('starter', gtin);
    const bodyA = { items: Array.from({ length: 30 }, (_, i) => ({ gtin, serialNumber: `BA-${i}` })) };
    const bodyB = { items: Array.from({ length: 25 }, (_, i) => ({ gtin, serialNumber: `BB-${i}` })) };
    const idempotencyKey = `other-body-${randomUUID()}`;
    const [a, b] = await Promise.all([
      api(0, 'POST', '/code/generate/batch', keyed(brand.key, idempotencyKey, bodyA)),
      api(1, 'POST', '/code/generate/batch', keyed(brand.key, idempotencyKey, bodyB)),
    ]);
    // Whichever claimed the key first runs; the other body is refused 422, never 409 nor run.
    expect([a.status, b.status].sort(), tally([a, b])).toEqual([200, 422]);
    const [winner, loser, winnerBody, loserBody, winnerGateway] =
      a.status === 200 ? [a, b, bodyA, bodyB, 0] : [b, a, bodyB, bodyA, 1];
    expect(loser.body.error?.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const loserPrefix = loserBody.items[0]?.serialNumber.slice(0, 3) as string;
    const stored = await sql<{ n: string }>('SELECT count(*) AS n FROM codes WHERE account_id = $1 AND serial LIKE $2', [
      brand.id,
      `${loserPrefix}%`,
    ]);
    expect(Number(stored[0]?.n)).toBe(0);
    // After the answer, through the gateway that did not run it: still 422 for the other body, the replay for the same.
    const again = await api(winnerGateway + 1, 'POST', '/code/generate/batch', keyed(brand.key, idempotencyKey, loserBody));
    expect(again.status, JSON.stringify(again.body)).toBe(422);
    expect(again.body.error?.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const replay = await api(winnerGateway + 1, 'POST', '/code/generate/batch', keyed(brand.key, idempotencyKey, winnerBody));
    expect(replay.status).toBe(200);
    expect(JSON.stringify(replay.body)).toBe(JSON.stringify(winner.body));
    // Single generate: another serial under a used key is 422 through either gateway.
    const single = `single-${randomUUID()}`;
    const made = await api(0, 'POST', '/code/generate', keyed(brand.key, single, { gtin, serialNumber: 'S-1' }));
    expect(made.status).toBe(201);
    for (const i of [0, 1]) {
      const other = await api(i, 'POST', '/code/generate', keyed(brand.key, single, { gtin, serialNumber: 'S-2' }));
      expect(other.status, JSON.stringify(other.body)).toBe(422);
    }
    expect(await codesOf(brand.id)).toBe(winnerBody.items.length + 1);
    expect(await generateUsed(brand.key)).toBe(winnerBody.items.length + 1);
  }, 60_000);

  it('never replays another API key’s or another account’s answer for the same Idempotency-Key, raced or after', async () => {
    await earlyInWindow(86_400_000, 60_000);
    const gtin = freshGtin();
    const brand = await newAccount('starter', gtin);
    const second = await api(0, 'POST', '/keys', { key: brand.key, body: { name: 'second', scopes: ['*'] } });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    const secondKey = second.body.secret as string;
    const otherGtin = freshGtin();
    const stranger = await newAccount('starter', otherGtin);

    // Two keys of one account, one Idempotency-Key, the same single generate, at once through both gateways.
    const idempotencyKey = `shared-${randomUUID()}`;
    const body = { gtin, serialNumber: 'SHARED-1' };
    const race = await Promise.all([
      api(0, 'POST', '/code/generate', keyed(brand.key, idempotencyKey, body)),
      api(1, 'POST', '/code/generate', keyed(secondKey, idempotencyKey, body)),
    ]);
    expect(race.map((answer) => answer.status).sort(), tally(race)).toEqual([201, 409]);
    const loser = race.find((answer) => answer.status === 409) as ApiResponse<Json>;
    expect(loser.body.error?.code, JSON.stringify(loser.body)).toBe('DUPLICATE_SERIAL');
    expect(loser.headers.get('idempotent-replayed')).toBeNull();

    // A batch: the first key's answer; the second key's own run finds every serial taken.
    const batchKey = `shared-batch-${randomUUID()}`;
    const items = Array.from({ length: 12 }, (_, i) => ({ gtin, serialNumber: `SB-${i}` }));
    const mine = await api(0, 'POST', '/code/generate/batch', keyed(brand.key, batchKey, { items }));
    expect(mine.status).toBe(200);
    const theirs = await api(1, 'POST', '/code/generate/batch', keyed(secondKey, batchKey, { items }));
    expect(theirs.status, JSON.stringify(theirs.body)).toBe(200);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.results.filter((result: Json) => result.code)).toHaveLength(0);
    expect(new Set(theirs.body.results.map((result: Json) => result.error?.code))).toEqual(new Set(['DUPLICATE_SERIAL']));
    // Another account, same key and body: its own request (not its GTIN), no replay, no code of the first's.
    const foreign = await api(1, 'POST', '/code/generate/batch', keyed(stranger.key, batchKey, { items }));
    expect(foreign.headers.get('idempotent-replayed')).toBeNull();
    expect(JSON.stringify(foreign.body)).not.toContain(mine.body.results[0].code);
    const foreignOne = await api(0, 'POST', '/code/generate', keyed(stranger.key, idempotencyKey, body));
    expect(foreignOne.headers.get('idempotent-replayed')).toBeNull();
    expect(foreignOne.status, JSON.stringify(foreignOne.body)).toBe(403);
    // The first key's own retries still replay through either gateway.
    for (const i of [0, 1]) {
      const retry = await api(i, 'POST', '/code/generate/batch', keyed(brand.key, batchKey, { items }));
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(JSON.stringify(retry.body)).toBe(JSON.stringify(mine.body));
    }
    // Charged once per code made: 1 + 12; the refusals gave theirs back.
    expect(await codesOf(brand.id)).toBe(13);
    expect(await generateUsed(brand.key)).toBe(13);
    expect(await codesOf(stranger.id)).toBe(0);
    expect(await generateUsed(stranger.key)).toBe(0);
  }, 60_000);

  it('makes no more than the day’s 100 codes when keyed batches race for them through both gateways', async () => {
    await earlyInWindow(86_400_000, 60_000);
    await earlyInWindow(1_000, 900);
    const gtin = freshGtin();
    const brand = await newAccount('free', gtin);
    const keys = Array.from({ length: 8 }, () => `quota-${randomUUID()}`);
    const bodies = keys.map((_, b) => ({ items: Array.from({ length: 20 }, (_, i) => ({ gtin, serialNumber: `Q${b}-${i}` })) }));
    const race = await Promise.all(
      keys.map((key, b) => api(b, 'POST', '/code/generate/batch', keyed(brand.key, key, bodies[b]))),
    );
    for (const answer of race) expect([200, 429], tally(race)).toContain(answer.status);
    const made = race.filter((answer) => answer.status === 200);
    expect(made.length, tally(race)).toBeLessThanOrEqual(5);
    let codes = await codesOf(brand.id);
    expect(codes, tally(race)).toBe(made.length * 20);
    expect(await generateUsed(brand.key)).toBe(codes);
    // The refused keys were released (a 429 pays nothing): their retries, a second later, run; the rest replay.
    await sleep(1_100);
    const retries = [];
    for (const [b, key] of keys.entries()) {
      retries.push(await api(b + 1, 'POST', '/code/generate/batch', keyed(brand.key, key, bodies[b])));
    }
    for (const [b, retry] of retries.entries()) {
      if (race[b]?.status === 200) {
        expect(retry.headers.get('idempotent-replayed')).toBe('true');
        expect(JSON.stringify(retry.body)).toBe(JSON.stringify(race[b]?.body));
      } else expect([200, 429], tally(retries)).toContain(retry.status);
    }
    codes = await codesOf(brand.id);
    expect(codes, tally(retries)).toBe(100);
    expect(await generateUsed(brand.key)).toBe(100);
  }, 60_000);

  it('refuses a keyed batch larger than the day has left whole, spending nothing, and releases its key', async () => {
    await earlyInWindow(86_400_000, 60_000);
    const gtin = freshGtin();
    const brand = await newAccount('free', gtin);
    const spent = await api(0, 'POST', '/code/generate/batch', {
      key: brand.key,
      body: { items: Array.from({ length: 40 }, (_, i) => ({ gtin, serialNumber: `P-${i}` })) },
    });
    expect(spent.status).toBe(200);
    const idempotencyKey = `over-${randomUUID()}`;
    const tooMany = { items: Array.from({ length: 61 }, (_, i) => ({ gtin, serialNumber: `O-${i}` })) };
    const over = await api(1, 'POST', '/code/generate/batch', keyed(brand.key, idempotencyKey, tooMany));
    expect(over.status, JSON.stringify(over.body)).toBe(429);
    expect(over.body.error?.code).toBe('RATE_LIMITED');
    expect(over.body.error?.details?.remaining).toBe(60);
    expect(await codesOf(brand.id)).toBe(40);
    expect(await generateUsed(brand.key)).toBe(40);
    // The 429 paid for nothing: the key is free, and a smaller batch with it runs (through the other gateway).
    await sleep(1_100);
    const fits = { items: tooMany.items.slice(0, 60) };
    const made = await api(0, 'POST', '/code/generate/batch', keyed(brand.key, idempotencyKey, fits));
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body.results.filter((result: Json) => result.code)).toHaveLength(60);
    const reused = await api(1, 'POST', '/code/generate/batch', keyed(brand.key, idempotencyKey, tooMany));
    expect(reused.status, JSON.stringify(reused.body)).toBe(422);
    expect(await codesOf(brand.id)).toBe(100);
    expect(await generateUsed(brand.key)).toBe(100);
    const none = await api(1, 'POST', '/code/generate', keyed(brand.key, `one-${randomUUID()}`, { gtin, serialNumber: 'N-1' }));
    expect(none.status).toBe(429);
    expect(await codesOf(brand.id)).toBe(100);
  }, 60_000);
});

// Last in the file: these stop, stall and kill processes (each left running again or restarted by the product's stop).
describe('a keyed batch whose gateway stalls or dies, retried through the other gateway', () => {
  it('counts every code against the day once the stalled attempt wakes up: it gives back no unit the retry relied on', async () => {
    await earlyInWindow(86_400_000, 120_000);
    const gtin = freshGtin();
    // A starter account: 1,000 generates a day.
    const brand = await newAccount('starter', gtin);
    const prefix = `STALL-${randomUUID().slice(0, 6)}`;
    // 200 items of ~13 KB metadata: chunks of ~28 items, of which the gateway sends 4 at a time.
    const items = Array.from({ length: 200 }, (_, i) => ({
      gtin,
      serialNumber: `${prefix}-${i}`,
      metadata: { name: `Item ${i}`, notes: 'n'.repeat(13_000) },
    }));
    const idempotencyKey = `stall-${randomUUID()}`;
    const codeServices = product.processNames().filter((name) => name.startsWith('code-service'));

    // Hold code-service so the first attempt is in flight, past its spend, when gateway-1 stalls.
    for (const name of codeServices) product.process(name).child.kill('SIGSTOP');
    let stalled: Promise<{ status: number; body?: Json }>;
    try {
      stalled = api(0, 'POST', '/code/generate/batch', {
        key: brand.key,
        headers: { 'idempotency-key': idempotencyKey },
        body: { items },
      }).catch((error: unknown) => ({ status: 0, body: { error: String(error) } }));
      // The attempt noted what it paid on its key: its spend is done and its chunks are on their way.
      await spendNoted(brand.id);
      await sleep(500);
      product.process('gateway-1').child.kill('SIGSTOP');
    } finally {
      for (const name of codeServices) product.process(name).child.kill('SIGCONT');
    }
    let retry: Json;
    let usedAfterRetry: number;
    try {
      // code-service stores the chunks gateway-1 sent; gateway-1's lease lapses (1.5 s, not renewed).
      await waitFor('the first chunks to be stored', async () => ((await codesOf(brand.id)) > 0 ? true : undefined), {
        timeoutMs: 20_000,
      });
      await sleep(2_500);
      retry = await api(1, 'POST', '/code/generate/batch', {
        key: brand.key,
        headers: { 'idempotency-key': idempotencyKey },
        body: { items },
      });
      usedAfterRetry = await generateUsed(brand.key);
      // Past gateway-1's request timeout (5 s), as a long pause would be.
      await sleep(3_000);
    } finally {
      product.process('gateway-1').child.kill('SIGCONT');
    }
    const late = await stalled;
    await sleep(1_000);
    const codes = await codesOf(brand.id);
    const used = await generateUsed(brand.key);
    const summary = {
      retryStatus: retry.status,
      usedAfterRetry,
      lateStatus: late.status,
      lateError: late.body?.error,
      codes,
      used,
    };
    expect(retry.status, JSON.stringify(summary)).toBe(200);
    expect(
      retry.body.results.filter((result: Json) => result.code),
      JSON.stringify(summary),
    ).toHaveLength(items.length);
    expect(codes, JSON.stringify(summary)).toBe(items.length);
    expect(usedAfterRetry, JSON.stringify(summary)).toBe(items.length);
    const usedAfterWake = used;

    // What the day has left holds no more than 1,000 codes in all.
    await sleep(1_100);
    const rest = await api(1, 'POST', '/code/generate/batch', {
      key: brand.key,
      body: { items: Array.from({ length: 1000 - used }, (_, i) => ({ gtin, serialNumber: `${prefix}-r${i}` })) },
    });
    const total = await codesOf(brand.id);
    const all = {
      ...summary,
      restStatus: rest.status,
      restErrors: [...new Set(rest.body.results?.map((r: Json) => r.error?.code))],
      total,
      usedAtEnd: await generateUsed(brand.key),
    };
    // 200 codes exist: 200 units of the day's quota, after the stalled attempt is done too.
    expect(usedAfterWake, JSON.stringify(all)).toBe(codes);
    expect(total, JSON.stringify(all)).toBeLessThanOrEqual(1000);
  }, 120_000);
  it('answers a keyed batch whose gateway was killed after code-service stored it with the stored codes, charged once', async () => {
    await earlyInWindow(86_400_000, 60_000);
    // The test before leaves gateway-1 running again (SIGCONT); it is killed here.
    const gtin = freshGtin();
    const brand = await newAccount('free', gtin);
    const items = Array.from({ length: 30 }, (_, i) => ({ gtin, serialNumber: `K-${i}` }));
    const idempotencyKey = `killed-${randomUUID()}`;
    const codeServices = product.processNames().filter((name) => name.startsWith('code-service'));
    for (const name of codeServices) product.process(name).child.kill('SIGSTOP');
    let cutOff: Promise<unknown>;
    try {
      cutOff = api(0, 'POST', '/code/generate/batch', {
        key: brand.key,
        headers: { 'idempotency-key': idempotencyKey },
        body: { items },
      }).catch(() => undefined);
      await spendNoted(brand.id);
      await sleep(300);
      await product.kill('gateway-1');
    } finally {
      for (const name of codeServices) product.process(name).child.kill('SIGCONT');
    }
    await cutOff;
    await waitFor('the batch to be stored', async () => ((await codesOf(brand.id)) === items.length ? true : undefined), {
      timeoutMs: 20_000,
    });
    const stored = await sql<{ asset_id: string; signature: string; serial: string }>(
      'SELECT asset_id, signature, serial FROM codes WHERE account_id = $1',
      [brand.id],
    );
    // The dead attempt's lease (1.5 s) lapses: until then a retry is refused 409 (a fixed 2 s wait before).
    await leaseLapsed(brand.id);
    // 30 of the day's 100 paid by the dead attempt; spend 70 more first, so the retry runs at the limit.
    const spend = await api(1, 'POST', '/code/generate/batch', {
      key: brand.key,
      body: { items: Array.from({ length: 70 }, (_, i) => ({ gtin, serialNumber: `F-${i}` })) },
    });
    expect(spend.status, JSON.stringify(spend.body)).toBe(200);
    const retry = await api(1, 'POST', '/code/generate/batch', {
      key: brand.key,
      headers: { 'idempotency-key': idempotencyKey },
      body: { items },
    });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    const bySerial = new Map(stored.map((row) => [row.serial, row]));
    for (const result of retry.body.results as Json[]) {
      const item = items[result.index] as { serialNumber: string };
      expect(result.code?.assetId, JSON.stringify(result)).toBe(bySerial.get(item.serialNumber)?.asset_id);
      expect(result.code?.signature, JSON.stringify(result)).toBe(bySerial.get(item.serialNumber)?.signature);
      expect(result.code?.url, JSON.stringify(result)).toContain(`sig=${bySerial.get(item.serialNumber)?.signature}`);
    }
    expect(await codesOf(brand.id)).toBe(100);
    expect(await generateUsed(brand.key)).toBe(100);
    // The retry's answer is now stored: replayed, still through the surviving gateway.
    const replay = await api(1, 'POST', '/code/generate/batch', {
      key: brand.key,
      headers: { 'idempotency-key': idempotencyKey },
      body: { items },
    });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(JSON.stringify(replay.body)).toBe(JSON.stringify(retry.body));
  }, 120_000);
});
