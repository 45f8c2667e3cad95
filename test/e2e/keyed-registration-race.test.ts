// A keyed registration retried while its timed-out first attempt is still committing (a review of
// 2026-12-05). The retry found no object yet, wrote the same stream and met that attempt's commit:
// 409 CONFLICT "Stream … already exists", which the gateway took for work not done and gave back the
// unit the first attempt kept, for an object that exists. The retry is now answered that object
// (madeBefore), and a CONFLICT never gives prepaid quota back (prepaid-work.ts). Real PostgreSQL (the
// distributed form): the embedded form's one connection serialises the two attempts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earlyInWindow } from '../support/client-address.ts';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call } from '../support/embedded.ts';
import { sqlOnce } from '../support/sql-once.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let product: DistributedProduct;
const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(product.url, method, `/api/v1${path}`, options);

const sql = <T = Json>(text: string, params: unknown[] = []) => sqlOnce<T>(product.databaseUrl, text, params);

beforeAll(async () => {
  product = await startDistributedProduct({ HALLMARK_REQUEST_TIMEOUT_MS: '1000' });
  // The first registration titled RACE-OBJ holds its (inserted, uncommitted) event 1.6 s, then commits.
  await sql('CREATE SEQUENCE race_obj_attempts');
  await sql(`CREATE OR REPLACE FUNCTION race_obj() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF nextval('race_obj_attempts') = 1 THEN PERFORM pg_sleep(1.6); END IF;
      RETURN NEW;
    END $$`);
  await sql(
    `CREATE TRIGGER race_obj AFTER INSERT ON events FOR EACH ROW WHEN (NEW.data->>'title' = 'RACE-OBJ') EXECUTE FUNCTION race_obj()`,
  );
}, 120_000);

afterAll(async () => {
  await product?.stop();
}, 60_000);

describe('a keyed registration retried while its first attempt commits', () => {
  it('is answered the object that attempt made, and the unit that attempt kept pays for it', async () => {
    await earlyInWindow(86_400_000, 60_000);
    const created = await api('POST', '/accounts', {
      key: product.operatorKey,
      body: { name: 'Race registrar', tier: 'starter' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const key = created.body.apiKey.secret as string;
    const accountId = created.body.account.id as string;
    const used = async () =>
      (await api('GET', '/usage', { key })).body.quotas.find((quota: Json) => quota.name === 'generate')?.used as number;
    const objectsOf = async () =>
      (await sql<{ count: number }>('SELECT count(*)::int AS count FROM auction_objects WHERE account_id = $1', [accountId]))[0]
        ?.count;

    const keyed = { key, headers: { 'idempotency-key': 'race-obj-1' } };
    const body = { title: 'RACE-OBJ', category: 'watch' };
    const first = await api('POST', '/auction/objects/register', { ...keyed, body });
    expect([first.status, first.body.error?.details?.reason], JSON.stringify(first.body)).toEqual([503, 'timeout']);
    // At once, while the first attempt's event is inserted and not yet committed.
    const retry = await api('POST', '/auction/objects/register', { ...keyed, body });
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await objectsOf()).toBe(1);
    expect(await used(), 'one object, one unit').toBe(1);
    // A further retry is answered the same object, and spends nothing more.
    const again = await api('POST', '/auction/objects/register', { ...keyed, body });
    expect([again.status, again.body.object?.id]).toEqual([201, retry.body.object?.id]);
    expect(await objectsOf()).toBe(1);
    expect(await used()).toBe(1);
  }, 60_000);
});
