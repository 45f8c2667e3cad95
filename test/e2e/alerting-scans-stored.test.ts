// A SUSPICIOUS or COUNTERFEIT answer leaves only once its scan is stored, with the message of the
// webhook it causes (docs/WEBHOOKS.md). In the distributed form "stored" is JetStream's
// acknowledgement (test/e2e/webhooks.test.ts). In the embedded form it was the in-process bus's
// memory: a review of 2026-12-03 killed `hallmark start` right after 59 COUNTERFEIT answers and
// found none of their scans or alerts after the restart. Now the scan is in the database when the
// answer arrives, so a kill from then on loses nothing: checked here by reading the database at
// once, with nothing waited for.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
const gtin = '09506000134352';

beforeAll(async () => {
  // Webhook endpoints on loopback (never called here: port 9 refuses).
  t = await startTestProduct({ HALLMARK_WEBHOOKS_ALLOW_PRIVATE: 'true' });
});
afterAll(async () => {
  await t?.stop();
});

describe('an alerting verdict in the embedded form', () => {
  it('has its scan and its webhook message in the database when the answer arrives', async () => {
    const operator = t.product.generatedOperatorKey as string;
    const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
      call<Json>(t.url, method, `/api/v1${path}`, options);
    const created = await api('POST', '/accounts', { key: operator, body: { name: 'Brand', tier: 'enterprise' } });
    const brand = created.body.apiKey.secret as string;
    const accountId = created.body.account.id as string;
    await api('POST', `/accounts/${accountId}/gtins`, { key: operator, body: { gtin } });
    const endpoint = await api('POST', '/webhooks/endpoints', {
      key: brand,
      body: { url: 'http://127.0.0.1:9/hook', eventTypes: ['scan.counterfeit'] },
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    const code = await api('POST', '/code/generate', { key: brand, body: { gtin, serialNumber: 'ALERT-1' } });
    expect(code.status, JSON.stringify(code.body)).toBe(201);
    const url = code.body.url as string;
    const signature = /sig=([^&]+)/.exec(url)?.[1] as string;
    const forged = url.replace(signature, `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`);

    for (let round = 1; round <= 5; round++) {
      const verified = await api('POST', '/code/verify', { key: brand, body: { url: forged } });
      expect(verified.body.verdict, JSON.stringify(verified.body)).toBe('COUNTERFEIT');
      // Read at once: before, the scan was still in the bus's memory here.
      const scans = await t.product.db.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM scans WHERE gtin = $1 AND serial = 'ALERT-1' AND verdict = 'COUNTERFEIT'`,
        [gtin],
      );
      expect(Number(scans[0]?.n), `round ${round}`).toBe(round);
      const messages = await t.product.db.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM webhook_messages WHERE account_id = $1 AND event_type = 'scan.counterfeit'`,
        [accountId],
      );
      expect(Number(messages[0]?.n), `round ${round}`).toBe(round);
    }
  });
});
