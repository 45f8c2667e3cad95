// Reports, distributed form: a verify-service replica killed (kill -9) while the owner's
// confirmations are in flight. Each report must end confirmed with exactly one event in the code's
// history, or pending with none; a retried decision says which; and the replica left standing
// blocks every confirmed code at once.
import { gs1CheckDigit } from '@hallmark/gs1';
import { createPostgresDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { type ApiResponse, call } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let product: DistributedProduct;
let db: SqlDatabase;
let owner: string;
let reporter: string;

const first13 = '0950600741113';
const gtin = `${first13}${gs1CheckDigit(first13)}`;

const api = (method: string, path: string, key: string, body?: unknown) =>
  call<Json>(product.url, method, `/api/v1${path}`, { key, ...(body !== undefined ? { body } : {}) });
function ok(response: ApiResponse<Json>, status = 200): Json {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  return response.body;
}

beforeAll(async () => {
  product = await startDistributedProduct(
    { HALLMARK_PUBLIC_RATE_LIMIT: '1000', HALLMARK_REQUEST_TIMEOUT_MS: '3000' },
    { replicas: { 'verify-service': 2 } },
  );
  db = createPostgresDatabase({ connectionString: product.databaseUrl, maxConnections: 2 });
  const made = ok(await api('POST', '/accounts', product.operatorKey, { name: 'Brand', tier: 'enterprise' }), 201);
  owner = made.apiKey.secret;
  ok(await api('POST', `/accounts/${made.account.id}/gtins`, product.operatorKey, { gtin }), 201);
  reporter = ok(await api('POST', '/accounts', product.operatorKey, { name: 'Reporter', tier: 'enterprise' }), 201).apiKey.secret;
}, 180_000);

afterAll(async () => {
  await db?.close();
  await product?.stop();
});

describe('a verify-service replica killed mid-decision (distributed form)', () => {
  it('leaves each report confirmed with its one event or pending with none, and the replica left blocks every confirmed code', async () => {
    const items: Array<{ url: string; assetId: string; reportId: string }> = [];
    for (let i = 0; i < 8; i++) {
      const code = ok(await api('POST', '/code/generate', owner, { gtin, serialNumber: `KILL-${i}`, batchNumber: 'L1' }), 201);
      const report = ok(await api('POST', '/code/report', reporter, { url: code.url, reason: 'seen at a market' }), 201);
      items.push({ url: code.url, assetId: code.assetId, reportId: report.reportId });
    }
    const sent = items.map((item) => api('POST', `/code/reports/${item.reportId}/confirm`, owner, { reason: 'fake' }));
    await new Promise((resolve) => setTimeout(resolve, 15));
    await product.kill('verify-service-1');
    const answers = await Promise.all(sent);
    for (const answer of answers) expect([200, 503], JSON.stringify(answer.body)).toContain(answer.status);

    for (const [index, item] of items.entries()) {
      const [row] = await db.query<{ status: string }>('SELECT status FROM code_reports WHERE report_id = $1', [item.reportId]);
      const events = await db.query<{ event_type: string }>(
        `SELECT event_type FROM event_log WHERE stream_id = $1 AND event_type LIKE 'code.report-%'`,
        [`asset-${item.assetId}`],
      );
      if (row?.status === 'confirmed') expect(events.map((event) => event.event_type)).toEqual(['code.report-confirmed']);
      else {
        expect(row?.status).toBe('pending');
        expect(events).toEqual([]);
      }
      if ((answers[index] as ApiResponse<Json>).status === 200) expect(row?.status).toBe('confirmed');
      // The owner retries what was not answered: confirmed now, or already confirmed.
      if ((answers[index] as ApiResponse<Json>).status !== 200) {
        const retry = await api('POST', `/code/reports/${item.reportId}/confirm`, owner, { reason: 'fake' });
        if (row?.status === 'confirmed') expect([retry.status, retry.body.error?.details?.status]).toEqual([409, 'confirmed']);
        else expect(retry.status, JSON.stringify(retry.body)).toBe(200);
      }
    }
    // Only verify-service-2 answers now: every code whose report is confirmed is blocked there.
    for (const item of items) {
      const answer = ok(await api('POST', '/code/verify', reporter, { url: item.url }));
      expect(answer.verdict, `${item.reportId} confirmed but verified ${answer.verdict}`).toBe('SUSPICIOUS');
    }
    await product.restart('verify-service-1');
    await waitFor(
      'verify-service-1 back',
      async () =>
        (await fetch(`${product.url}/api/v1/system/ping/verify-service`, { method: 'POST' })).status === 200 ? true : undefined,
      { timeoutMs: 60_000 },
    );
  });
});
