// A code with two confirmed reports (a review of 2026-12-05), over real HTTP, embedded form. Verifiers
// are shown the first confirmation (it stands; later ones change nothing shown); the owner's code view
// named the latest reported instead: another block id and reason than shoppers saw.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let test: TestProduct;
let operator: string;
let owner: string;
let ownerAccountId: string;
let rival: string;
const gtin = '09506000134369';

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(test.url, method, `/api/v1${path}`, options);

async function account(name: string) {
  const created = await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { key: created.body.apiKey.secret as string, accountId: created.body.account.id as string };
}

let serial = 0;
async function generate() {
  serial += 1;
  const response = await api('POST', '/code/generate', {
    key: owner,
    body: { gtin, serialNumber: `RR-${Date.now().toString(36)}-${serial}`, batchNumber: 'LOT1' },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { url: string; serial: string; assetId: string };
}

async function report(url: string, key = rival, reason = 'looks odd') {
  const response = await api('POST', '/code/report', { key, body: { url, reason } });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.reportId as string;
}

const decide = (reportId: string, action: string, reason?: string) =>
  api('POST', `/code/reports/${reportId}/${action}`, { key: owner, ...(reason ? { body: { reason } } : {}) });

beforeAll(async () => {
  test = await startTestProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '1000', HALLMARK_REPORT_LIMIT_PER_ACCOUNT: '1000' });
  operator = test.product.generatedOperatorKey as string;
  ({ key: owner, accountId: ownerAccountId } = await account('Owner brand'));
  ({ key: rival } = await account('Rival'));
  const granted = await api('POST', `/accounts/${ownerAccountId}/gtins`, { key: operator, body: { gtin } });
  expect(granted.status, JSON.stringify(granted.body)).toBeLessThan(300);
}, 120_000);

afterAll(async () => {
  await test?.stop();
});

describe('two confirmed reports of one code', () => {
  it('GET /codes/{assetId} names the block verifiers see: the first confirmation, its reason and id', async () => {
    const code = await generate();
    const a = await report(code.url);
    const b = await report(code.url);
    expect((await decide(a, 'confirm', 'first fake')).status).toBe(200);
    test.clock.advance(1000);
    expect((await decide(b, 'confirm', 'second fake')).status).toBe(200);
    const verified = await api('POST', '/code/verify', { key: rival, body: { url: code.url } });
    const status = await api('GET', `/codes/${code.assetId}`, { key: owner });
    expect(verified.body.confirmedReport?.reason).toBe('first fake');
    expect(status.body.blocked).toMatchObject({ kind: 'report', blockId: a, reason: 'first fake' });
    // Lifting the first, the second is the block both are shown.
    expect((await decide(a, 'lift', 'a mistake')).status).toBe(200);
    const after = await api('POST', '/code/verify', { key: rival, body: { url: code.url } });
    expect(after.body.confirmedReport?.reason).toBe('second fake');
    expect((await api('GET', `/codes/${code.assetId}`, { key: owner })).body.blocked).toMatchObject({
      kind: 'report',
      blockId: b,
      reason: 'second fake',
    });
  });
});
