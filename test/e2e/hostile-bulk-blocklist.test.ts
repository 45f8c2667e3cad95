// POST /blocklist/bulk under a brand recalling a lot by file and a client that retries (an audit of
// docs/API.md's promises over HTTP, 2026-12-07). Each chunk of 500 lines appended its blocks one at a
// time (6-8 ms each embedded), outlasted the gateway's wait for the chunk (HALLMARK_REQUEST_TIMEOUT_MS)
// and was answered 503 while its blocks were stored: a file of 9,999 lines got a 503 after 22-58 s
// with 2,500-8,000 of its blocks recorded, and the retry, which the route let carry no
// Idempotency-Key, blocked them twice. Here the gateway waits 2.5 s for a chunk (5 s by default), so
// a file of 2,000 lines shows what one of 10,000 did at the default.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call, startEmbeddedProduct } from '../support/embedded.ts';
import { withProductDatabase } from '../support/product-database.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const lines = 2_000;
/** Room for the file and 100 blocks more, so that two files at once meet the cap. */
const maxActiveBlocks = lines + 100;
const settings = { HALLMARK_REQUEST_TIMEOUT_MS: '2500', HALLMARK_MAX_ACTIVE_BLOCKS: String(maxActiveBlocks) };

const csvOf = (gtin: string, serials: readonly string[]) =>
  `gtin,serial,kind,reason\r\n${serials.map((serial) => `${gtin},${serial},withdrawn,recalled lot`).join('\r\n')}\r\n`;
const serialsFrom = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, index) => `${prefix}${String(index).padStart(5, '0')}`);

describe.each([
  ['embedded', () => startEmbeddedProduct(settings)],
  ['distributed', () => startDistributedProduct(settings)],
])('blocklist in bulk (%s form)', (_name, start: () => Promise<RunningProduct>) => {
  let form: RunningProduct;
  let brand: { key: string; accountId: string; gtin: string };

  beforeAll(async () => {
    form = await start();
    const created = await call<Json>(form.url, 'POST', '/api/v1/accounts', {
      key: form.operatorKey,
      body: { name: 'Recalling brand', tier: 'enterprise' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const gtin = '09506000134352';
    const granted = await call<Json>(form.url, 'POST', `/api/v1/accounts/${created.body.account.id}/gtins`, {
      key: form.operatorKey,
      body: { gtin },
    });
    expect(granted.status, JSON.stringify(granted.body)).toBe(201);
    brand = { key: created.body.apiKey.secret, accountId: created.body.account.id, gtin };
  });
  afterAll(async () => {
    await form?.stop();
  });

  const bulk = (csv: string, idempotencyKey?: string) =>
    fetch(`${form.url}/api/v1/blocklist/bulk`, {
      method: 'POST',
      headers: {
        'x-api-key': brand.key,
        'content-type': 'text/csv',
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      body: csv,
    });
  const stored = () =>
    withProductDatabase(form, async (query) => {
      const [rows] = (await query(
        'SELECT count(*)::int AS blocks FROM code_blocklist WHERE account_id = $1 AND removed_at IS NULL',
        [brand.accountId],
      )) as { blocks: number }[];
      const [events] = (await query(
        `SELECT count(*)::int AS events FROM event_log WHERE stream_id = $1 AND event_type = 'code.blocked'`,
        [`account-${brand.accountId}-live`],
      )) as { events: number }[];
      return { blocks: rows?.blocks, events: events?.events };
    });

  it('a file of 2,000 lines is answered whole, each line blocked once with its event; its retry is the same answer, nothing blocked twice', async () => {
    const csv = csvOf(brand.gtin, serialsFrom('R', lines));
    const first = await bulk(csv, 'recall-1');
    const answer = await first.text();
    expect(first.status, answer.slice(0, 400)).toBe(200);
    const results = (JSON.parse(answer) as Json).results as Json[];
    expect(results).toHaveLength(lines);
    expect(
      results.every(
        (result, index) => result.line === index + 2 && result.block?.serialFrom === `R${String(index).padStart(5, '0')}`,
      ),
    ).toBe(true);
    expect(await stored()).toEqual({ blocks: lines, events: lines });
    // The answer was lost; the client sends the file again with its key.
    const retried = await bulk(csv, 'recall-1');
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(await retried.text()).toBe(answer);
    expect(await stored()).toEqual({ blocks: lines, events: lines });
    // The key with another file is another request.
    const other = await bulk(csvOf(brand.gtin, ['X00001']), 'recall-1');
    expect(other.status).toBe(422);
    expect(((await other.json()) as Json).error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await stored()).toEqual({ blocks: lines, events: lines });
  });

  it('a keyed file answered 503 part-way is finished by its retries, each line blocked once (a review of 2026-12-07)', async () => {
    // Each chunk was stored in its own transaction and the 503 freed the key: every retry blocked the
    // stored chunks' lines again (three attempts, three blocks a line). Here each chunk of this
    // account takes 3.2 s to store, past the gateway's 2.5 s wait.
    const created = await call<Json>(form.url, 'POST', '/api/v1/accounts', {
      key: form.operatorKey,
      body: { name: 'Slow recall brand', tier: 'enterprise' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const slow = {
      key: created.body.apiKey.secret as string,
      accountId: created.body.account.id as string,
      gtin: '09506000134369',
    };
    const granted = await call<Json>(form.url, 'POST', `/api/v1/accounts/${slow.accountId}/gtins`, {
      key: form.operatorKey,
      body: { gtin: slow.gtin },
    });
    expect(granted.status, JSON.stringify(granted.body)).toBe(201);
    await withProductDatabase(form, async (query) => {
      await query(`CREATE FUNCTION slow_chunk() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF EXISTS (SELECT 1 FROM stored_now WHERE account_id = '${slow.accountId}') THEN PERFORM pg_sleep(3.2); END IF;
          RETURN NULL;
        END $$`);
      await query(`CREATE TRIGGER slow_chunk AFTER INSERT ON code_blocklist REFERENCING NEW TABLE AS stored_now
        FOR EACH STATEMENT EXECUTE FUNCTION slow_chunk()`);
    });
    try {
      const csv = csvOf(slow.gtin, serialsFrom('S', 1_000));
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let attempt = 0; attempt < 8; attempt++) {
        last = await fetch(`${form.url}/api/v1/blocklist/bulk`, {
          method: 'POST',
          headers: { 'x-api-key': slow.key, 'content-type': 'text/csv', 'idempotency-key': 'slow-recall' },
          body: csv,
        });
        statuses.push(last.status);
        if (last.status === 200) break;
        await last.text();
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(statuses.at(-1), JSON.stringify(statuses)).toBe(200);
      expect(
        statuses.slice(0, -1).every((status) => status === 503 || status === 409),
        JSON.stringify(statuses),
      ).toBe(true);
      expect(statuses.length, 'a chunk past the wait made the first attempt a 503').toBeGreaterThan(1);
      const results = ((await (last as Response).json()) as Json).results as Json[];
      expect(results).toHaveLength(1_000);
      expect(results.every((result) => result.block?.gtin === slow.gtin)).toBe(true);
      const counts = await withProductDatabase(form, async (query) => {
        const [rows] = (await query(
          'SELECT count(*)::int AS blocks, count(DISTINCT serial_from)::int AS serials FROM code_blocklist WHERE account_id = $1 AND removed_at IS NULL',
          [slow.accountId],
        )) as { blocks: number; serials: number }[];
        const [events] = (await query(
          `SELECT count(*)::int AS events FROM event_log WHERE stream_id = $1 AND event_type = 'code.blocked'`,
          [`account-${slow.accountId}-live`],
        )) as { events: number }[];
        return { ...rows, events: events?.events };
      });
      expect(counts).toEqual({ blocks: 1_000, serials: 1_000, events: 1_000 });
    } finally {
      await withProductDatabase(form, async (query) => {
        await query('DROP TRIGGER slow_chunk ON code_blocklist');
        await query('DROP FUNCTION slow_chunk()');
      });
    }
  });

  it('two files at once for the last 100 places: 100 lines blocked in all, the rest refused CONFLICT, one event a block', async () => {
    const answers = await Promise.all([
      bulk(csvOf(brand.gtin, serialsFrom('A', 100))),
      bulk(csvOf(brand.gtin, serialsFrom('B', 100))),
    ]);
    const results = await Promise.all(
      answers.map(async (response) => {
        expect(response.status).toBe(200);
        return ((await response.json()) as Json).results as Json[];
      }),
    );
    const all = results.flat();
    expect(all.filter((result) => 'block' in result)).toHaveLength(100);
    expect(all.filter((result) => result.error?.code === 'CONFLICT')).toHaveLength(100);
    expect(await stored()).toEqual({ blocks: maxActiveBlocks, events: maxActiveBlocks });
  });
});
