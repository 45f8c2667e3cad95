import { createPostgresDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call, createEnterpriseAccount } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// Issue #17, item 6: verification is the hot path every shopper depends on, so it must not stop
// when code-service does. verify-service keeps its own read model of the codes (fed from the event
// store); once it holds a code, killing code-service changes nothing a verifier or a shopper sees.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const gtin = '09506000134376';
const pathOf = (url: string) => url.slice(new URL(url).origin.length);
const forge = (url: string) => url.replace(/sig=(.)/, (_, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);

describe('verification with code-service down (distributed form)', () => {
  let product: DistributedProduct;
  let db: SqlDatabase;
  let brand: string;
  let retailer: string;
  const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
    call<Json>(product.url, method, `/api/v1${path}`, options);
  const tenant = (name: string) => createEnterpriseAccount(product.url, product.operatorKey, name);

  beforeAll(async () => {
    product = await startDistributedProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '1000' });
    db = createPostgresDatabase({ connectionString: product.databaseUrl, applicationName: 'e2e-verify-read-model' });
    const owner = await tenant('Maison Resilient');
    brand = owner.key;
    retailer = (await tenant('Retailer')).key;
    const grant = await api('POST', `/accounts/${owner.id}/gtins`, { key: product.operatorKey, body: { gtin } });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await db?.close();
    await product?.stop();
  });

  it('answers AUTHENTIC (API and resolver page) for codes it projected, and COUNTERFEIT for forgeries, after code-service is killed', async () => {
    const single = await api('POST', '/code/generate', {
      key: brand,
      body: { gtin, serialNumber: 'UP-1', batchNumber: 'LOT9', expiryDate: '2031-06-30', metadata: { name: 'Resilient Tonic' } },
    });
    expect(single.status, JSON.stringify(single.body)).toBe(201);
    const batch = await api('POST', '/code/generate/batch', {
      key: brand,
      body: {
        items: [
          { gtin, serialNumber: 'UP-2', metadata: { name: 'Resilient Tonic' } },
          { gtin, serialNumber: 'UP-3' },
        ],
      },
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    const codes = [single.body, ...batch.body.results.map((result: Json) => result.code)] as Json[];
    expect(codes.map((code) => code?.serial)).toEqual(['UP-1', 'UP-2', 'UP-3']);
    const assetIds = codes.map((code) => code.assetId as string);

    // The projection has them (it lags a fresh code by about 100 ms).
    await waitFor(
      'the read model to hold the codes',
      async () => {
        const rows = await db.query<{ asset_id: string }>(
          'SELECT asset_id FROM code_directory WHERE asset_id = ANY($1::text[])',
          [assetIds],
        );
        return rows.length === assetIds.length ? true : undefined;
      },
      { timeoutMs: 10_000 },
    );

    expect(await product.kill('code-service-1', 'SIGKILL')).toBeNull();
    // Nothing answers for code-service any more.
    const ping = await waitFor('code-service to be gone', async () => {
      const answer = await api('POST', '/system/ping/code-service', { key: product.operatorKey, body: {} });
      return answer.status === 503 ? answer : undefined;
    });
    expect(ping.body.error?.code).toBe('SERVICE_UNAVAILABLE');

    for (const code of codes) {
      for (const key of [retailer, brand]) {
        const verified = await api('POST', '/code/verify', { key, body: { url: code.url } });
        expect(verified.status, JSON.stringify(verified.body)).toBe(200);
        expect(verified.body).toMatchObject({
          verdict: 'AUTHENTIC',
          gtin,
          serial: code.serial,
          checks: { signature: { passed: true, keyId: code.keyId } },
        });
      }
      const forged = await api('POST', '/code/verify', { key: retailer, body: { url: forge(code.url) } });
      expect(forged.status, JSON.stringify(forged.body)).toBe(200);
      expect(forged.body).toMatchObject({ verdict: 'COUNTERFEIT', checks: { signature: { passed: false } } });
    }

    // The shopper's page: the product's name comes from the read model too.
    const page = await fetch(`${product.url}${pathOf(codes[0]?.url)}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Authentic product');
    expect(html).toContain('Resilient Tonic');
    const asJson = await fetch(`${product.url}${pathOf(codes[1]?.url)}`, { headers: { accept: 'application/json' } });
    expect(asJson.status).toBe(200);
    expect(await asJson.json()).toMatchObject({ verdict: 'AUTHENTIC', serial: 'UP-2' });
    const forgedPage = await fetch(`${product.url}${pathOf(forge(codes[2]?.url))}`);
    expect(forgedPage.status).toBe(200);
    expect(await forgedPage.text()).toContain('Counterfeit: do not use');

    // A serial never issued, signed by nobody: not in the read model, code-service cannot be asked,
    // so it is checked under the GTIN owner's own keys, and fails.
    const madeUp = forge(codes[0]?.url.replace(/\/21\/UP-1(?=[/?])/, '/21/NEVER-ISSUED'));
    const unknown = await api('POST', '/code/verify', { key: retailer, body: { url: madeUp } });
    expect(unknown.status, JSON.stringify(unknown.body)).toBe(200);
    expect(unknown.body.verdict).toBe('COUNTERFEIT');

    // Nothing was restarted: code-service is still gone.
    expect(product.process('code-service-1').child.exitCode ?? product.process('code-service-1').child.signalCode).toBe(
      'SIGKILL',
    );
  }, 60_000);
});
