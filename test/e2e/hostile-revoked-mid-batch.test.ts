import { createPostgresDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call, type EmbeddedRunningProduct, startEmbeddedProduct } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// A GTIN revoked while a batch of its codes runs (noticed by a review of the write side, 2026-12-04;
// fixed the same day). Each chunk of the batch was decided on a replica's cache of who signs the GTIN,
// and chunks decided before the revocation kept being stored after it: codes of a GTIN the account
// no longer held, answered 201 and charged, that never verify. The codes insert now takes only the
// current signer's codes as it reads the claims, under the claims' advisory lock held shared (a
// revocation holds it exclusively), and such items are GTIN_NOT_OWNED with their quota given back:
// after the revocation's answer not one more code of the GTIN is stored. Both forms.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let product: RunningProduct;
let db: SqlDatabase;
const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(product.url, method, `/api/v1${path}`, options);

const gtin = '09506000134352';
const items = 10_000;

async function storedCodes(accountId: string): Promise<number> {
  const rows = await db.query<{ count: string | number }>(
    'SELECT count(*) AS count FROM codes WHERE account_id = $1 AND gtin = $2',
    [accountId, gtin],
  );
  return Number(rows[0]?.count ?? 0);
}

// What is stored is the question, not how fast: a chunk waits for the revocation's lock, and on a
// loaded machine (CI with another file beside it) one took longer than the default 5 s to answer.
const slowMachine = { HALLMARK_REQUEST_TIMEOUT_MS: '30000' };

describe.each([
  ['embedded', () => startEmbeddedProduct(slowMachine)],
  ['distributed', () => startDistributedProduct(slowMachine)],
])('a GTIN revoked while a batch of its codes runs (%s form)', (form, start: () => Promise<RunningProduct>) => {
  beforeAll(async () => {
    product = await start();
    db =
      form === 'embedded'
        ? (product as EmbeddedRunningProduct).test.product.db
        : createPostgresDatabase({ connectionString: product.databaseUrl as string, maxConnections: 2 });
  });

  afterAll(async () => {
    if (form === 'distributed') await db?.close();
    await product?.stop();
  });

  it('stores no code of it once the revocation is answered; the rest are GTIN_NOT_OWNED, their quota given back', async () => {
    const created = await api('POST', '/accounts', {
      key: product.operatorKey,
      body: { name: 'Revoked mid-batch', tier: 'enterprise' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const accountId = created.body.account.id as string;
    const brand = created.body.apiKey.secret as string;
    const grant = await api('POST', `/accounts/${accountId}/gtins`, { key: product.operatorKey, body: { gtin } });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);

    const batch = api('POST', '/code/generate/batch', {
      key: brand,
      body: { items: Array.from({ length: items }, (_, i) => ({ gtin, serialNumber: `MID-${i}` })) },
    });
    // The operator takes the GTIN back once the first chunks are stored.
    await waitFor('the first codes of the batch', async () => ((await storedCodes(accountId)) > 0 ? true : undefined), {
      intervalMs: 5,
    });
    const revoked = await api('POST', `/gtins/${grant.body.id}/revoke`, { key: product.operatorKey });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    const storedWhenRevoked = await storedCodes(accountId);

    const answer = await batch;
    expect(answer.status, JSON.stringify(answer.body).slice(0, 500)).toBe(200);
    const results = answer.body.results as Json[];
    const made = results.filter((result) => result.code);
    const refused = results.filter((result) => result.error);
    // The batch was cut by the revocation, not finished before it.
    expect(storedWhenRevoked).toBeLessThan(items);
    expect(refused.length).toBeGreaterThan(0);
    // Not one code more after the revocation's answer: every one stored was answered, and every
    // other item was refused as not owned (not as a taken serial).
    expect(await storedCodes(accountId)).toBe(storedWhenRevoked);
    expect(made).toHaveLength(storedWhenRevoked);
    expect(new Set(refused.map((result) => result.error.code))).toEqual(new Set(['GTIN_NOT_OWNED']));
    // Charged for the codes made only.
    const usage = await api('GET', '/usage', { key: brand });
    expect(usage.body.quotas.find((quota: Json) => quota.name === 'generate')?.used).toBe(storedWhenRevoked);
  });
});
