// Rolling updates and graceful stops in the distributed form (a review of 2026-12-04; its finding,
// fixed: code-service closed its QR renderer threads under the renders in flight, answered 500).
// Two gateways and two replicas of every service; one replica at a time gets SIGTERM while requests are in flight (as Kubernetes
// does on every deploy) and a new one is started in its place while the load goes on. Every answer
// must be the request's answer or a retryable 503 with Retry-After in the API's envelope; every
// stopped process exits 0 within HALLMARK_SHUTDOWN_TIMEOUT_MS; keyed writes answered 503 and
// retried happen once; what was acknowledged is stored once, verifies, is listed once, and the
// projections (Merkle, code directory, scan history) hold every event once.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { sqlOnce } from '../support/sql-once.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const gtin = '09506000134352';
const shutdownTimeoutMs = 8_000;
let product: DistributedProduct;
let brand: string;
let house: string;

interface Outcome {
  what: string;
  gateway: number;
  status: number;
  retryAfter: string | null;
  connection: string | null;
  body: Json;
  error?: string;
  at: number;
}

const outcomes: Outcome[] = [];

async function send(
  gateway: number,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string>; what?: string; binary?: boolean } = {},
): Promise<Outcome> {
  const base = (product.gatewayUrls as string[])[gateway] as string;
  const outcome: Outcome = {
    what: options.what ?? `${method} ${path.split('?')[0]}`,
    gateway,
    status: 0,
    retryAfter: null,
    connection: null,
    body: {},
    at: Date.now(),
  };
  try {
    const response = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: {
        ...(options.key ? { 'x-api-key': options.key } : {}),
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
    outcome.status = response.status;
    outcome.retryAfter = response.headers.get('retry-after');
    outcome.connection = response.headers.get('connection');
    const isJson = (response.headers.get('content-type') ?? '').includes('json');
    if (isJson) {
      const text = await response.text();
      try {
        outcome.body = text ? JSON.parse(text) : {};
      } catch {
        outcome.body = { unparsable: text.slice(0, 200) };
      }
    } else {
      const bytes = await response.arrayBuffer();
      outcome.body = { bytes: bytes.byteLength, type: response.headers.get('content-type') };
    }
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    outcome.error = `${(error as Error).message}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''}`;
  }
  outcomes.push(outcome);
  return outcome;
}

/** What is wrong with an answer given while a replica stopped, or undefined when it is acceptable. */
function problemOf(outcome: Outcome, allowed: number[]): string | undefined {
  if (outcome.error) return `no answer: ${outcome.error}`;
  if (allowed.includes(outcome.status)) return undefined;
  if (outcome.status === 503) {
    const error = outcome.body.error;
    if (error?.code !== 'SERVICE_UNAVAILABLE' || typeof error.message !== 'string')
      return `503 outside the envelope: ${JSON.stringify(outcome.body).slice(0, 300)}`;
    if (!outcome.retryAfter) return `503 without Retry-After: ${JSON.stringify(error).slice(0, 300)}`;
    return undefined;
  }
  return `${outcome.status}: ${JSON.stringify(outcome.body).slice(0, 300)}`;
}

function problemsAmong(list: Outcome[], allowed: Record<string, number[]>): string[] {
  return list
    .map((outcome) => {
      const problem = problemOf(outcome, allowed[outcome.what] ?? [200, 201]);
      return problem && `${outcome.what} via gateway-${outcome.gateway + 1}: ${problem}`;
    })
    .filter((problem): problem is string => problem !== undefined);
}

const sql = <T = Json>(text: string, params: unknown[] = []) => sqlOnce<T>(product.databaseUrl, text, params);
const countOf = async (text: string, params: unknown[]) => Number((await sql<{ n: string }>(text, params))[0]?.n);

/** Runs `workers` loops of `step` until `done` resolves; each loop's i counts its steps. */
async function load(workers: number, done: Promise<unknown>, step: (worker: number, i: number) => Promise<void>) {
  let over = false;
  void done.then(() => {
    over = true;
  });
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      for (let i = 0; !over; i++) await step(worker, i);
    }),
  );
}

/** SIGTERM `name`, noting its exit code and how long it took; then starts a new replica in its place. */
async function rollingStop(name: string, restart = true) {
  const stopped = product.process(name);
  const started = Date.now();
  const code = await product.kill(name, 'SIGTERM');
  const ms = Date.now() - started;
  const tail = stopped.lines
    .filter((line) => line.level !== undefined && Number(line.level) >= 40)
    .slice(-8)
    .map((line) => `${line.msg} ${line.err ? JSON.stringify(line.err).slice(0, 300) : ''}`);
  if (restart) await product.restart(name);
  return { name, code, ms, warnings: tail, stderr: stopped.stderr.join('').slice(-1500) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A keyed write answered 503/409/no answer: retried with its key until it is answered for good. */
async function retryKeyed(first: Outcome, resend: (gateway: number) => Promise<Outcome>): Promise<Outcome> {
  let last = first;
  const deadline = Date.now() + 30_000;
  for (let attempt = 1; (last.error || last.status === 503 || last.status === 409) && Date.now() < deadline; attempt++) {
    await sleep(Number(last.retryAfter ?? 1) * 300);
    last = await resend(attempt % 2);
  }
  return last;
}

async function newAccount(name: string, withGtin: boolean) {
  const created = await send(0, 'POST', '/accounts', {
    key: product.operatorKey,
    body: { name: `${name} ${randomUUID().slice(0, 6)}`, tier: 'enterprise' },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  if (withGtin) {
    const granted = await send(0, 'POST', `/accounts/${created.body.account.id}/gtins`, {
      key: product.operatorKey,
      body: { gtin },
    });
    expect(granted.status, JSON.stringify(granted.body)).toBe(201);
  }
  return created.body.apiKey.secret as string;
}

describe('rolling stops of one replica of two under load (distributed form)', () => {
  beforeAll(async () => {
    product = await startDistributedProduct(
      { HALLMARK_IDEMPOTENCY_LEASE_MS: '2000', HALLMARK_SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs) },
      {
        gateways: 2,
        replicas: { 'code-service': 2, 'verify-service': 2, 'auction-service': 2, 'compliance-service': 2 },
      },
    );
    brand = await newAccount('Rolling brand', true);
    house = await newAccount('Rolling house', false);
  }, 120_000);
  afterAll(async () => {
    await product?.stop();
  }, 60_000);

  it('code-service: a replica stopped mid generates, keyed batches, QR images and verifications loses, doubles and fails nothing', async () => {
    const prefix = `RS-${randomUUID().slice(0, 6)}`;
    const singles: Array<{ key: string; body: Json; outcome: Outcome }> = [];
    const batches: Array<{ key: string; items: Json[]; outcome: Outcome }> = [];
    const made: Json[] = [];
    // A few codes first, to verify and draw under load.
    for (let i = 0; i < 4; i++) {
      const answer = await send(i % 2, 'POST', '/code/generate', {
        key: brand,
        body: { gtin, serialNumber: `${prefix}-seed-${i}`, batchNumber: 'B1' },
      });
      expect.soft(answer.status, JSON.stringify(answer.body)).toBe(201);
      made.push(answer.body);
    }
    const phase = outcomes.length;
    let stopResult: Awaited<ReturnType<typeof rollingStop>> | undefined;
    let stopAt = 0;
    const stopping = (async () => {
      await sleep(2_500);
      stopAt = Date.now();
      stopResult = await rollingStop('code-service-1');
      await sleep(3_000);
    })();
    await load(10, stopping, async (worker, i) => {
      const gateway = (worker + i) % 2;
      const kind = worker % 5;
      if (kind === 0 || kind === 1) {
        const key = `single-${randomUUID()}`;
        const body = { gtin, serialNumber: `${prefix}-s-${worker}-${i}`, batchNumber: 'B1', metadata: { n: i } };
        const outcome = await send(gateway, 'POST', '/code/generate', {
          key: brand,
          body,
          headers: { 'idempotency-key': key },
          what: 'generate',
        });
        singles.push({ key, body, outcome });
        if (outcome.status === 201) made.push(outcome.body);
      } else if (kind === 2) {
        const key = `batch-${randomUUID()}`;
        const items = Array.from({ length: 60 }, (_, j) => ({
          gtin,
          serialNumber: `${prefix}-b-${worker}-${i}-${j}`,
          batchNumber: 'B1',
          metadata: { notes: 'n'.repeat(4_000) },
        }));
        const outcome = await send(gateway, 'POST', '/code/generate/batch', {
          key: brand,
          body: { items },
          headers: { 'idempotency-key': key },
          what: 'batch',
        });
        batches.push({ key, items, outcome });
      } else if (kind === 3) {
        const code = made[i % made.length] as Json;
        await send(gateway, 'GET', `/code/qr?url=${encodeURIComponent(code.url)}&format=png&size=2048`, {
          key: brand,
          what: 'qr',
        });
      } else {
        const code = made[(i * 7) % made.length] as Json;
        const url = i % 3 === 0 ? code.url.replace('/10/B1', '/10/B9') : code.url;
        await send(gateway, 'POST', '/code/verify', { key: brand, body: { url }, what: 'verify' });
      }
    });
    await stopping;
    const during = outcomes.slice(phase);
    const stop = stopResult as NonNullable<typeof stopResult>;

    // Keyed retries of whatever was not answered for good.
    const retriedSingles = await Promise.all(
      singles.map(async (single) => ({
        ...single,
        final: await retryKeyed(single.outcome, (gateway) =>
          send(gateway, 'POST', '/code/generate', {
            key: brand,
            body: single.body,
            headers: { 'idempotency-key': single.key },
            what: 'generate retry',
          }),
        ),
      })),
    );
    const retriedBatches = await Promise.all(
      batches.map(async (batch) => ({
        ...batch,
        final: await retryKeyed(batch.outcome, (gateway) =>
          send(gateway, 'POST', '/code/generate/batch', {
            key: brand,
            body: { items: batch.items },
            headers: { 'idempotency-key': batch.key },
            what: 'batch retry',
          }),
        ),
      })),
    );

    const summary = {
      requests: during.length,
      byStatus: during.reduce<Record<string, number>>((tally, outcome) => {
        const label = `${outcome.what} ${outcome.error ? 'error' : outcome.status}`;
        tally[label] = (tally[label] ?? 0) + 1;
        return tally;
      }, {}),
      stop: { code: stop.code, ms: stop.ms, warnings: stop.warnings },
      // Each QR request: ms from the stop's start to the request's start, and its answer.
      qr: during
        .filter((outcome) => outcome.what === 'qr')
        .map((outcome) => [outcome.at - stopAt, outcome.gateway + 1, outcome.status, outcome.body.error?.message?.slice(0, 40)]),
    };
    console.log('code-service phase', JSON.stringify(summary, null, 1));

    // Every code a keyed single or batch acknowledged (at first or on retry) is stored once and verifies.
    const notDone = [
      ...retriedSingles.filter((single) => single.final.status !== 201).map((single) => single.final),
      ...retriedBatches.filter((batch) => batch.final.status !== 200).map((batch) => batch.final),
    ];
    const assetIds: string[] = [];
    for (const single of retriedSingles) if (single.final.status === 201) assetIds.push(single.final.body.assetId);
    for (const batch of retriedBatches) {
      if (batch.final.status !== 200) continue;
      for (const result of batch.final.body.results) if (result.code) assetIds.push(result.code.assetId);
    }
    const serials = [
      ...retriedSingles.map((single) => single.body.serialNumber as string),
      ...retriedBatches.flatMap((batch) => batch.items.map((item) => item.serialNumber as string)),
    ];
    const stored = await sql<{ serial: string; n: string }>(
      'SELECT serial, count(*) AS n FROM codes WHERE serial = ANY($1::text[]) GROUP BY serial',
      [serials],
    );
    const twice = stored.filter((row) => Number(row.n) !== 1).map((row) => row.serial);
    const storedSet = new Set(stored.map((row) => row.serial));
    const missing = serials.filter((serial) => !storedSet.has(serial));
    const events = await countOf(
      `SELECT count(*) AS n FROM event_log WHERE event_type = 'code.generated' AND stream_id = ANY($1::text[])`,
      [assetIds.map((id) => `asset-${id}`)],
    );
    // The projections: one one-leaf tree and one directory row per code.
    await waitFor(
      'the projections to hold every code',
      async () => {
        const trees = await countOf('SELECT count(*) AS n FROM provenance_assets WHERE asset_id = ANY($1::text[])', [assetIds]);
        const directory = await countOf('SELECT count(*) AS n FROM code_directory WHERE asset_id = ANY($1::text[])', [assetIds]);
        return trees === assetIds.length && directory === assetIds.length ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    ).catch(() => undefined);
    const trees = await countOf(
      'SELECT count(*) AS n FROM provenance_assets WHERE asset_id = ANY($1::text[]) AND tree_size = 1',
      [assetIds],
    );
    const directory = await countOf('SELECT count(*) AS n FROM code_directory WHERE asset_id = ANY($1::text[])', [assetIds]);
    // A sample verifies AUTHENTIC and is listed once.
    const sample = retriedSingles.filter((single) => single.final.status === 201).slice(0, 20);
    const badVerifies: string[] = [];
    for (const [index, single] of sample.entries()) {
      const verified = await send(index % 2, 'POST', '/code/verify', { key: brand, body: { url: single.final.body.url } });
      if (verified.body.verdict !== 'AUTHENTIC')
        badVerifies.push(`${single.body.serialNumber}: ${JSON.stringify(verified.body)}`);
      const listed = await send(index % 2, 'GET', `/codes?serial=${encodeURIComponent(single.body.serialNumber)}`, {
        key: brand,
      });
      if (listed.body.data?.length !== 1) badVerifies.push(`${single.body.serialNumber} listed ${listed.body.data?.length}`);
    }

    const state = {
      acknowledged: assetIds.length,
      expected: serials.length,
      notDone: notDone.map((outcome) => [outcome.status, outcome.error ?? outcome.body.error?.code]).slice(0, 10),
      twice,
      missing: missing.slice(0, 10),
      events,
      trees,
      directory,
      badVerifies,
    };
    console.log('code-service state', JSON.stringify(state));
    expect.soft(problemsAmong(during, { qr: [200], verify: [200] }), JSON.stringify(summary)).toEqual([]);
    expect.soft(stop.code, JSON.stringify(stop)).toBe(0);
    expect.soft(stop.ms).toBeLessThan(shutdownTimeoutMs);
    expect.soft(state.notDone).toEqual([]);
    expect.soft(state.twice).toEqual([]);
    expect.soft(state.missing).toEqual([]);
    expect.soft(new Set(assetIds).size).toBe(serials.length);
    expect.soft(events).toBe(serials.length);
    expect.soft(trees).toBe(serials.length);
    expect.soft(directory).toBe(serials.length);
    expect.soft(badVerifies).toEqual([]);
  }, 110_000);

  it('verify-service: a replica stopped mid verifications of genuine and forged links: every verdict answered, every scan recorded once', async () => {
    const prefix = `RV-${randomUUID().slice(0, 6)}`;
    const codes: Json[] = [];
    const seeded = await send(0, 'POST', '/code/generate/batch', {
      key: brand,
      body: { items: Array.from({ length: 40 }, (_, i) => ({ gtin, serialNumber: `${prefix}-${i}`, batchNumber: 'B1' })) },
    });
    expect.soft(seeded.status, JSON.stringify(seeded.body)).toBe(200);
    for (const result of seeded.body.results) codes.push(result.code);
    const phase = outcomes.length;
    const verdicts: Array<{ serial: string; forged: boolean; outcome: Outcome }> = [];
    let stopResult: Awaited<ReturnType<typeof rollingStop>> | undefined;
    const stopping = (async () => {
      await sleep(2_500);
      stopResult = await rollingStop('verify-service-1');
      await sleep(3_000);
    })();
    await load(12, stopping, async (worker, i) => {
      const code = codes[(worker * 31 + i) % codes.length] as Json;
      const forged = (worker + i) % 4 === 0;
      const url = forged ? code.url.replace('/10/B1', '/10/B7') : code.url;
      const outcome = await send((worker + i) % 2, 'POST', '/code/verify', { key: brand, body: { url }, what: 'verify' });
      verdicts.push({ serial: code.serial, forged, outcome });
    });
    await stopping;
    const during = outcomes.slice(phase);
    const stop = stopResult as NonNullable<typeof stopResult>;
    const answered = verdicts.filter((verdict) => verdict.outcome.status === 200);
    const wrong = answered
      .filter((verdict) => verdict.outcome.body.verdict !== (verdict.forged ? 'COUNTERFEIT' : 'AUTHENTIC'))
      .filter((verdict) => !(verdict.outcome.body.verdict === 'SUSPICIOUS' && !verdict.forged))
      .map((verdict) => `${verdict.serial} forged=${verdict.forged}: ${verdict.outcome.body.verdict}`);
    // Every verification answered 200 is one scan in the history (the scan-history projection).
    let scans = 0;
    await waitFor(
      'the scan history to hold every answered verification',
      async () => {
        scans = await countOf('SELECT count(*) AS n FROM scans WHERE serial LIKE $1', [`${prefix}-%`]);
        return scans >= answered.length ? true : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 250 },
    ).catch(() => undefined);
    const summary = {
      requests: during.length,
      byStatus: during.reduce<Record<string, number>>((tally, outcome) => {
        const label = `${outcome.what} ${outcome.error ? 'error' : outcome.status}`;
        tally[label] = (tally[label] ?? 0) + 1;
        return tally;
      }, {}),
      answered: answered.length,
      scans,
      stop: { code: stop.code, ms: stop.ms, warnings: stop.warnings },
    };
    console.log('verify-service phase', JSON.stringify(summary, null, 1));
    expect.soft(problemsAmong(during, { verify: [200] }), JSON.stringify(summary)).toEqual([]);
    expect.soft(wrong.slice(0, 10)).toEqual([]);
    expect.soft(stop.code, JSON.stringify(stop)).toBe(0);
    expect.soft(stop.ms).toBeLessThan(shutdownTimeoutMs);
    // Lost scans: fewer rows than answered verifications; doubled: more.
    expect.soft(scans, JSON.stringify(summary)).toBe(answered.length);
  }, 110_000);

  it('auction-service and compliance-service: replicas stopped mid transfers and chain reads: one transfer each, chains and Merkle roots whole', async () => {
    // Objects to sell, each registered once.
    const objects: string[] = [];
    for (let i = 0; i < 24; i++) {
      const registered = await send(i % 2, 'POST', '/auction/objects/register', {
        key: house,
        body: { title: `Rolling lot ${i}`, category: 'watch', ownerId: 'client-jane' },
      });
      expect.soft(registered.status, JSON.stringify(registered.body)).toBe(201);
      objects.push(registered.body.object.id);
    }
    const phase = outcomes.length;
    const sales: Array<{ objectId: string; initiate: Outcome; confirm?: Outcome }> = [];
    let stops: Array<Awaited<ReturnType<typeof rollingStop>>> = [];
    const stopping = (async () => {
      await sleep(1_500);
      stops = await Promise.all([rollingStop('auction-service-1'), rollingStop('compliance-service-1')]);
      await sleep(3_000);
    })();
    let next = 0;
    await load(8, stopping, async (worker, i) => {
      const gateway = (worker + i) % 2;
      if (worker < 4 && next < objects.length) {
        const objectId = objects[next++] as string;
        const key = `sale-${randomUUID()}`;
        const body = { objectId, fromOwnerId: 'client-jane', toOwnerId: `buyer-${worker}`, salePrice: 100, saleCurrency: 'EUR' };
        const initiate = await retryKeyed(
          await send(gateway, 'POST', '/auction/transfers/initiate', {
            key: house,
            body,
            headers: { 'idempotency-key': key },
            what: 'initiate',
          }),
          (g) =>
            send(g, 'POST', '/auction/transfers/initiate', {
              key: house,
              body,
              headers: { 'idempotency-key': key },
              what: 'initiate retry',
            }),
        );
        const sale: (typeof sales)[number] = { objectId, initiate };
        sales.push(sale);
        if (initiate.status !== 201) return;
        const confirmKey = `confirm-${randomUUID()}`;
        const confirmBody = { transferCode: initiate.body.transferCode };
        const path = `/auction/transfers/${initiate.body.transferId}/confirm`;
        sale.confirm = await retryKeyed(
          await send(1 - gateway, 'POST', path, {
            key: house,
            body: confirmBody,
            headers: { 'idempotency-key': confirmKey },
            what: 'confirm',
          }),
          (g) =>
            send(g, 'POST', path, {
              key: house,
              body: confirmBody,
              headers: { 'idempotency-key': confirmKey },
              what: 'confirm retry',
            }),
        );
      } else {
        const objectId = objects[(worker * 7 + i) % objects.length] as string;
        if (i % 2 === 0) await send(gateway, 'GET', `/compliance/${objectId}/verify`, { key: house, what: 'chain' });
        else await send(gateway, 'GET', `/compliance/${objectId}/merkle/root`, { key: house, what: 'root' });
      }
    });
    await stopping;
    const during = outcomes.slice(phase);
    const summary = {
      requests: during.length,
      byStatus: during.reduce<Record<string, number>>((tally, outcome) => {
        const label = `${outcome.what} ${outcome.error ? 'error' : outcome.status}`;
        tally[label] = (tally[label] ?? 0) + 1;
        return tally;
      }, {}),
      stops: stops.map((stop) => ({ name: stop.name, code: stop.code, ms: stop.ms, warnings: stop.warnings })),
    };
    console.log('auction/compliance phase', JSON.stringify(summary, null, 1));
    // Each object: its history, its chain and its Merkle root agree through both gateways.
    const inconsistent: string[] = [];
    for (const objectId of objects) {
      const sale = sales.find((one) => one.objectId === objectId);
      const sold = sale?.confirm?.status === 200;
      const expectedTypes = sold ? ['registered', 'transfer_initiated', 'sold', 'transferred'] : undefined;
      const history = await send(0, 'GET', `/auction/objects/${objectId}/provenance`, { key: house });
      const types = (history.body.events ?? []).map((event: Json) => event.type);
      if (expectedTypes && JSON.stringify(types) !== JSON.stringify(expectedTypes))
        inconsistent.push(`${objectId} events ${types}`);
      if (history.body.chain_valid !== true) inconsistent.push(`${objectId} chain_valid ${history.body.chain_valid}`);
      const verified = await send(1, 'GET', `/compliance/${objectId}/verify`, { key: house });
      if (verified.body.isValid !== true || verified.body.eventCount !== types.length)
        inconsistent.push(`${objectId} verify ${JSON.stringify(verified.body).slice(0, 200)} vs ${types.length} events`);
      const roots = await Promise.all([0, 1].map((g) => send(g, 'GET', `/compliance/${objectId}/merkle/root`, { key: house })));
      if (roots[0]?.body.rootHash !== roots[1]?.body.rootHash || roots[0]?.body.treeSize !== types.length)
        inconsistent.push(`${objectId} roots ${JSON.stringify(roots.map((root) => root.body)).slice(0, 300)}`);
    }
    // Stored events per object's stream: as many as its history shows (none doubled by a retry).
    const streams = await sql<{ stream_id: string; n: string }>(
      'SELECT stream_id, count(*) AS n FROM event_log WHERE stream_id = ANY($1::text[]) GROUP BY stream_id',
      [objects.map((id) => `asset-${id}`)],
    );
    const sold = new Set(sales.filter((sale) => sale.confirm?.status === 200).map((sale) => `asset-${sale.objectId}`));
    const initiated = new Set(sales.filter((sale) => sale.initiate.status === 201).map((sale) => `asset-${sale.objectId}`));
    const wrongCounts = streams
      .filter((row) => Number(row.n) !== (sold.has(row.stream_id) ? 4 : initiated.has(row.stream_id) ? 2 : 1))
      .map((row) => `${row.stream_id}: ${row.n}`);
    expect
      .soft(problemsAmong(during, { chain: [200], root: [200], initiate: [201], confirm: [200] }), JSON.stringify(summary))
      .toEqual([]);
    for (const stop of stops) {
      expect.soft(stop.code, JSON.stringify(stop)).toBe(0);
      expect.soft(stop.ms, stop.name).toBeLessThan(shutdownTimeoutMs);
    }
    expect
      .soft(
        sales
          .filter((sale) => sale.initiate.status !== 201 || sale.confirm?.status !== 200)
          .map((sale) => [sale.initiate.status, sale.confirm?.status]),
      )
      .toEqual([]);
    expect.soft(inconsistent).toEqual([]);
    expect.soft(wrongCounts).toEqual([]);
  }, 110_000);

  it('gateway: one of two stopped mid load finishes what it read, answers with Connection: close, and exits 0 in time', async () => {
    const prefix = `RG-${randomUUID().slice(0, 6)}`;
    const phase = outcomes.length;
    const keyed: Array<{ key: string; items: Json[]; outcome: Outcome }> = [];
    let stopResult: Awaited<ReturnType<typeof rollingStop>> | undefined;
    let stoppedAt = Number.POSITIVE_INFINITY;
    const stopping = (async () => {
      await sleep(2_000);
      stoppedAt = Date.now();
      stopResult = await rollingStop('gateway-1', false);
      await sleep(1_000);
    })();
    await load(10, stopping, async (worker, i) => {
      // Until the stop, both gateways; a client whose connection is refused goes to the other (a load balancer would).
      const gateway = Date.now() > stoppedAt + 200 ? 1 : (worker + i) % 2;
      const key = `gw-${randomUUID()}`;
      const items = Array.from({ length: worker % 2 === 0 ? 40 : 1 }, (_, j) => ({
        gtin,
        serialNumber: `${prefix}-${worker}-${i}-${j}`,
        metadata: { notes: 'n'.repeat(2_000) },
      }));
      const outcome = await send(gateway, 'POST', '/code/generate/batch', {
        key: brand,
        body: { items },
        headers: { 'idempotency-key': key },
        what: 'batch',
      });
      keyed.push({ key, items, outcome });
    });
    await stopping;
    const stop = stopResult as NonNullable<typeof stopResult>;
    const during = outcomes.slice(phase);
    // Refused connections (nothing sent) after the stop began are not lost requests.
    const refused = during.filter((outcome) => outcome.error?.includes('ECONNREFUSED'));
    // A reset of a kept-alive connection the stopping gateway closed as idle while the client was
    // sending on it (HTTP/1.1's keep-alive race; Kubernetes' preStop pause keeps clients off it):
    // judged below by whether the request ran, not here.
    const judged = during.filter(
      (outcome) =>
        !outcome.error?.includes('ECONNREFUSED') &&
        !(outcome.error?.includes('ECONNRESET') || outcome.error?.includes('other side closed')),
    );
    const closeMissing = judged.filter(
      (outcome) => outcome.gateway === 0 && outcome.at > stoppedAt && !outcome.error && outcome.connection !== 'close',
    );
    // Was a request the stopping gateway reset run? (Before any retry: its serials stored or not.)
    const resets = await Promise.all(
      keyed
        .filter((one) => one.outcome.error)
        .map(async (one) => ({
          error: one.outcome.error,
          msAfterStop: one.outcome.at - stoppedAt,
          items: one.items.length,
          storedBeforeRetry: await countOf('SELECT count(*) AS n FROM codes WHERE serial = ANY($1::text[])', [
            one.items.map((item) => item.serialNumber),
          ]),
        })),
    );
    console.log('requests the stopping gateway gave no answer to', JSON.stringify(resets));
    const finals = await Promise.all(
      keyed.map(async (one) => ({
        ...one,
        final: await retryKeyed(one.outcome, () =>
          send(1, 'POST', '/code/generate/batch', {
            key: brand,
            body: { items: one.items },
            headers: { 'idempotency-key': one.key },
            what: 'batch retry',
          }),
        ),
      })),
    );
    const serials = keyed.flatMap((one) => one.items.map((item) => item.serialNumber as string));
    const stored = await sql<{ serial: string; n: string }>(
      'SELECT serial, count(*) AS n FROM codes WHERE serial = ANY($1::text[]) GROUP BY serial',
      [serials],
    );
    const summary = {
      requests: during.length,
      refused: refused.length,
      resets,
      byStatus: during.reduce<Record<string, number>>((tally, outcome) => {
        const label = `gw${outcome.gateway + 1} ${outcome.error ? `error ${outcome.error.slice(0, 60)}` : outcome.status}`;
        tally[label] = (tally[label] ?? 0) + 1;
        return tally;
      }, {}),
      stop: { code: stop.code, ms: stop.ms, warnings: stop.warnings },
    };
    console.log('gateway phase', JSON.stringify(summary, null, 1));
    await product.restart('gateway-1');
    await waitFor(
      'gateway-1 to be ready',
      async () => ((await fetch(`${product.url}/ready`).catch(() => undefined))?.ok ? true : undefined),
      {
        timeoutMs: 60_000,
      },
    );
    expect.soft(problemsAmong(judged, {}), JSON.stringify(summary)).toEqual([]);
    // A reset request that ran lost its answer: the gateway had read it and did not answer it.
    expect.soft(resets.filter((reset) => reset.storedBeforeRetry > 0)).toEqual([]);
    expect.soft(closeMissing.length).toBe(0);
    expect.soft(stop.code, JSON.stringify(stop)).toBe(0);
    expect.soft(stop.ms).toBeLessThan(shutdownTimeoutMs);
    expect.soft(finals.filter((one) => one.final.status !== 200).map((one) => one.final.error ?? one.final.status)).toEqual([]);
    expect.soft(stored.filter((row) => Number(row.n) !== 1)).toEqual([]);
    expect.soft(stored.length).toBe(serials.length);
  }, 110_000);
  it('code-service: QR images being drawn when their replica is stopped are answered, or refused 503 with Retry-After, never 500', async () => {
    const code = await send(0, 'POST', '/code/generate', {
      key: brand,
      body: { gtin, serialNumber: `RQ-${randomUUID().slice(0, 6)}`, batchNumber: 'B1' },
    });
    expect(code.status, JSON.stringify(code.body)).toBe(201);
    const phase = outcomes.length;
    // Six 2,048-pixel PNGs at once: both replicas' two threads busy, a few waiting, when one replica stops.
    const images = Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        send(i % 2, 'GET', `/code/qr?url=${encodeURIComponent(code.body.url)}&format=png&size=2048`, { key: brand, what: 'qr' }),
      ),
    );
    await sleep(400);
    const stop = await rollingStop('code-service-2');
    await images;
    const during = outcomes.slice(phase);
    const summary = {
      answers: during.map((outcome) => [outcome.status, outcome.retryAfter, outcome.body.error?.message ?? outcome.body.type]),
      stop: { code: stop.code, ms: stop.ms },
    };
    console.log('QR phase', JSON.stringify(summary));
    expect.soft(problemsAmong(during, { qr: [200] }), JSON.stringify(summary)).toEqual([]);
    expect.soft(stop.code).toBe(0);
    expect.soft(stop.ms).toBeLessThan(shutdownTimeoutMs);
  }, 90_000);
});
