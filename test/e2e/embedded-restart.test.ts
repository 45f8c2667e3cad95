import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callFrom, newClientAddress } from '../support/client-address.ts';
import { call, restartTestProduct, startTestProduct, type TestProduct } from '../support/embedded.ts';

// What the distributed form keeps in Redis (scan counters, travel, risk windows, daily quotas,
// report and failed-authentication limits) outlives a restart of the embedded form too: its
// memory cache is journaled into PGlite (docs/ARCHITECTURE.md, Embedded durability).

let t: TestProduct;
let operator: string;
let brand: string;
let retailer: string;
let sandbox: string;
const gtin = '09506000134352';
const reportsPerAccount = 3;
const authFailuresPerMinute = 3;

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
const api = <T = Record<string, any>>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(t.url, method, `/api/v1${path}`, options);

let serialCounter = 0;
const nextSerial = () => `SN-R-${Date.now().toString(36)}-${++serialCounter}`;

async function generate(key: string) {
  const response = await api('POST', '/code/generate', { key, body: { gtin, serialNumber: nextSerial() } });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { url: string; serial: string };
}

/** A verification from an address of its own: a client of its own for the scan counters. */
const verifyAsNewClient = (key: string, body: Record<string, unknown>) =>
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
  callFrom<Record<string, any>>(newClientAddress(), t.url, 'POST', '/api/v1/code/verify', { key, body });

const verify = (key: string, body: Record<string, unknown>) => api('POST', '/code/verify', { key, body });
const unknownKey = `svc_live_${'0'.repeat(64)}`;

beforeAll(async () => {
  t = await startTestProduct({
    HALLMARK_REPORT_LIMIT_PER_ACCOUNT: String(reportsPerAccount),
    HALLMARK_AUTH_FAILURES_PER_MINUTE: String(authFailuresPerMinute),
  });
  // Every window (the minute of failed authentications, the hour of reports and scans, the day of
  // quotas) stays the same one across the restart: the clock stands still, mid-minute.
  t.clock.freeze(new Date(Math.floor(Date.now() / 60_000) * 60_000 + 30_000));
  operator = t.product.generatedOperatorKey as string;
  const account = async (name: string) => {
    const created = await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { key: created.body.apiKey.secret as string, accountId: created.body.account.id as string };
  };
  const brandAccount = await account('Restart brand');
  brand = brandAccount.key;
  const grant = await api('POST', `/accounts/${brandAccount.accountId}/gtins`, { key: operator, body: { gtin } });
  expect(grant.status, JSON.stringify(grant.body)).toBe(201);
  retailer = (await account('Restart retailer')).key;
  const test = await api('POST', '/keys', { key: brand, body: { name: 'sandbox', scopes: ['*'], environment: 'test' } });
  expect(test.status, JSON.stringify(test.body)).toBe(201);
  sandbox = test.body.secret as string;
});

afterAll(async () => {
  await t?.stop();
});

describe('the embedded form after a restart on the same data folder', () => {
  it('keeps scan counters, first seen, travel, risk windows, daily quotas, report and failed-authentication limits', async () => {
    // Scans: 12 clients before the restart, 9 after: past 20 in the hour only if the first 12 are remembered.
    const counted = await generate(brand);
    const before = [];
    for (let i = 0; i < 12; i++) before.push(await verifyAsNewClient(retailer, { url: counted.url }));
    const firstSeen = before[0]?.body.metadata.firstSeen as string;
    expect(before.at(-1)?.body.metadata).toMatchObject({ totalScans: 12, firstSeen });
    expect(before.at(-1)?.body.riskIndicators).not.toContain('EXCESSIVE_SCANS');

    // Travel: a located scan in Paris before, New York after.
    const travelling = await generate(brand);
    const paris = await verify(retailer, { url: travelling.url, location: { latitude: 48.8566, longitude: 2.3522 } });
    expect(paris.body.verdict).toBe('AUTHENTIC');

    // The test environment's 100 requests a day: 40 spent (the key's creation was live).
    const sandboxCode = await generate(sandbox);
    let remaining = Number.NaN;
    for (let i = 0; i < 39; i++) {
      const response = await verify(sandbox, { url: sandboxCode.url });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      remaining = Number(response.headers.get('x-ratelimit-remaining'));
    }
    expect(remaining).toBe(60);

    // Reports: 2 of the retailer's 3 this hour.
    for (let i = 0; i < reportsPerAccount - 1; i++) {
      const report = await api('POST', '/code/report', { key: retailer, body: { url: counted.url, reason: `report ${i}` } });
      expect(report.status, JSON.stringify(report.body)).toBe(201);
    }
    // Failed authentications: 2 of this address's 3 this minute.
    for (let i = 0; i < authFailuresPerMinute - 1; i++) expect((await api('GET', '/keys', { key: unknownKey })).status).toBe(401);

    t = await restartTestProduct(t);
    // Soft: each of the kept states is reported on its own when it is not kept.

    const after = [];
    for (let i = 0; i < 9; i++) after.push(await verifyAsNewClient(retailer, { url: counted.url }));
    const last = after.at(-1);
    expect.soft(last?.body.metadata).toMatchObject({ totalScans: 21, firstSeen });
    expect.soft(last?.body.riskIndicators).toContain('EXCESSIVE_SCANS');

    const newYork = await verify(retailer, { url: travelling.url, location: { latitude: 40.7128, longitude: -74.006 } });
    expect.soft(newYork.body).toMatchObject({ verdict: 'SUSPICIOUS', riskIndicators: ['GEOGRAPHIC_IMPOSSIBILITY'] });

    const next = await verify(sandbox, { url: sandboxCode.url });
    expect.soft(next.status).toBe(200);
    expect.soft(Number(next.headers.get('x-ratelimit-remaining'))).toBe(59);

    const third = await api('POST', '/code/report', { key: retailer, body: { url: counted.url, reason: 'third' } });
    expect.soft(third.status, JSON.stringify(third.body)).toBe(201);
    const fourth = await api('POST', '/code/report', { key: retailer, body: { url: counted.url, reason: 'fourth' } });
    expect.soft(fourth.status, JSON.stringify(fourth.body)).toBe(429);

    expect.soft((await api('GET', '/keys', { key: unknownKey })).status).toBe(401);
    const throttled = await api('GET', '/keys', { key: unknownKey });
    expect.soft(throttled.status).toBe(429);
    expect.soft(throttled.body.error?.code).toBe('RATE_LIMITED');
  });
});
