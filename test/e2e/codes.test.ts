import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callFrom, earlyInWindow, newClientAddress } from '../support/client-address.ts';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// jsqr is CommonJS exporting `default`: depending on the loader the function is the import or its `default`.
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as (
  data: Uint8ClampedArray,
  width: number,
  height: number,
) => { data: string } | null;
const run = promisify(execFile);
const bin = fileURLToPath(new URL('../../apps/hallmark/bin/hallmark.js', import.meta.url));

let t: TestProduct;
let brand: string;
let retailer: string;
let sandbox: string;

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
const api = <T = Record<string, any>>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(t.url, method, `/api/v1${path}`, options);

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

let serialCounter = 0;
const nextSerial = () => `SN-${Date.now().toString(36)}-${++serialCounter}`;
const gtin = '09506000134352';

async function generate(key: string, body: Record<string, unknown> = {}) {
  const response = await api('POST', '/code/generate', { key, body: { gtin, serialNumber: nextSerial(), ...body } });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as {
    url: string;
    serial: string;
    signature: string;
    keyId: string;
    assetId: string;
    expiresAt: string | null;
  };
}

const verify = (key: string, body: Record<string, unknown>, query = '') => api('POST', `/code/verify${query}`, { key, body });

beforeAll(async () => {
  t = await startTestProduct();
  const operator = t.product.generatedOperatorKey as string;
  const account = async (name: string, environment = 'live') =>
    (
      await api<{ account: { id: string }; apiKey: { secret: string } }>('POST', '/accounts', {
        key: operator,
        body: { name, tier: 'enterprise', environment },
      })
    ).body;
  const brandAccount = await account('Brand');
  brand = brandAccount.apiKey.secret;
  // Only the GTIN's owner signs its codes: the operator grants it to the brand (docs/SIGNING.md).
  const grant = await api('POST', `/accounts/${brandAccount.account.id}/gtins`, { key: operator, body: { gtin } });
  expect(grant.status, JSON.stringify(grant.body)).toBe(201);
  retailer = (await account('Retailer')).apiKey.secret;
  // The brand's own sandbox: a test key of the same account (a live grant covers both environments).
  sandbox = (
    await api<{ secret: string }>('POST', '/keys', { key: brand, body: { name: 'sandbox', scopes: ['*'], environment: 'test' } })
  ).body.secret;
});

afterAll(async () => {
  await t?.stop();
});

describe('POST /code/generate', () => {
  it('answers 201 with a signed GS1 Digital Link in the spec’s shape', async () => {
    const serialNumber = nextSerial();
    const response = await api('POST', '/code/generate', {
      key: brand,
      body: { gtin, serialNumber, batchNumber: 'LOT42', expiryDate: '2030-06-30', metadata: { name: 'Eau de Parfum 50 ml' } },
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      gtin,
      serial: serialNumber,
      batch: 'LOT42',
      expiryDate: '2030-06-30',
      keyId: expect.any(String),
      assetId: expect.stringMatching(/^code_/),
      expiresAt: '2030-07-01T00:00:00.000Z',
    });
    expect(response.body.url).toMatch(new RegExp(`/01/${gtin}/21/${serialNumber}/10/LOT42\\?17=300630&sig=[A-Za-z0-9_-]{86}$`));
    expect(response.body.signature).toHaveLength(86);
    expect(Number.isNaN(Date.parse(response.body.createdAt))).toBe(false);
  });

  it('answers MISSING_REQUIRED_FIELD, INVALID_GTIN (with provided and expected) and VALIDATION_ERROR', async () => {
    expectError(await api('POST', '/code/generate', { key: brand, body: { gtin } }), 400, 'MISSING_REQUIRED_FIELD');
    const badGtin = await api('POST', '/code/generate', { key: brand, body: { gtin: '09506000134353', serialNumber: 'X' } });
    expectError(badGtin, 400, 'INVALID_GTIN');
    expect(badGtin.body.error?.details).toEqual({ provided: '09506000134353', expected: '09506000134352' });
    expectError(
      await api('POST', '/code/generate', { key: brand, body: { gtin: '123', serialNumber: 'X' } }),
      400,
      'INVALID_GTIN',
    );
    expectError(
      await api('POST', '/code/generate', { key: brand, body: { gtin, serialNumber: 'bad#serial' } }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await api('POST', '/code/generate', { key: brand, body: { gtin, serialNumber: 'X', colour: 'red' } }),
      400,
      'VALIDATION_ERROR',
    );
    // An expiry that does not exist is refused, as a date or a date-time (the latter was signed as 2
    // March), and so is one GS1 would read a century early (AI 17's YY is within 50 years of today).
    for (const expiryDate of ['2031-02-30', '2031-02-30T00:00:00Z', '2031-06-30T24:00:00Z', '2099-12-31']) {
      expectError(
        await api('POST', '/code/generate', { key: brand, body: { gtin, serialNumber: 'EXPIRY-X', expiryDate } }),
        400,
        'VALIDATION_ERROR',
      );
    }
    const fiftyYearsAhead = `${new Date().getUTCFullYear() + 50}-12-31`;
    const far = await api('POST', '/code/generate', {
      key: brand,
      body: { gtin, serialNumber: 'EXPIRY-50', expiryDate: fiftyYearsAhead },
    });
    expect(far.status, JSON.stringify(far.body)).toBe(201);
    expect(far.body.expiryDate).toBe(fiftyYearsAhead);
  });

  it('answers DUPLICATE_SERIAL for the same GTIN and serial, per account and environment', async () => {
    const serialNumber = nextSerial();
    expect((await api('POST', '/code/generate', { key: brand, body: { gtin, serialNumber } })).status).toBe(201);
    expectError(await api('POST', '/code/generate', { key: brand, body: { gtin, serialNumber } }), 409, 'DUPLICATE_SERIAL');
    expect((await api('POST', '/code/generate', { key: sandbox, body: { gtin, serialNumber } })).status).toBe(201);
  });

  it('returns the first answer to a retry with the same Idempotency-Key, and IDEMPOTENCY_KEY_REUSED for another body', async () => {
    const body = { gtin, serialNumber: nextSerial() };
    const headers = { 'idempotency-key': `retry-${nextSerial()}` };
    const first = await api('POST', '/code/generate', { key: brand, body, headers });
    const retry = await api('POST', '/code/generate', { key: brand, body, headers });
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expectError(
      await api('POST', '/code/generate', { key: brand, body: { ...body, batchNumber: 'B' }, headers }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
  });

  it('gives exactly one 201 to 50 parallel generates of one GTIN and serial', async () => {
    const body = { gtin, serialNumber: nextSerial() };
    const responses = await Promise.all(Array.from({ length: 50 }, () => api('POST', '/code/generate', { key: brand, body })));
    expect(responses.filter((response) => response.status === 201)).toHaveLength(1);
    expect(responses.filter((response) => response.status === 409)).toHaveLength(49);
  });

  it('needs the assets:create scope', async () => {
    const reader = (await api('POST', '/keys', { key: brand, body: { name: 'reader', scopes: ['assets:read'] } })).body
      .secret as string;
    expectError(
      await api('POST', '/code/generate', { key: reader, body: { gtin, serialNumber: 'X' } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
  });
});

describe('POST /code/generate/batch', () => {
  it('answers each item by its index: codes, and the same errors as single generation', async () => {
    const taken = nextSerial();
    await generate(brand, { serialNumber: taken });
    const fresh = nextSerial();
    const items = [
      { gtin, serialNumber: fresh, batchNumber: 'B' },
      { gtin: '09506000134353', serialNumber: nextSerial() },
      { gtin },
      { gtin, serialNumber: taken },
      { gtin, serialNumber: fresh },
      { gtin, serialNumber: 42 },
      'not an object',
      { gtin, serialNumber: nextSerial(), expiryDate: '2031-01-31' },
    ];
    const response = await api('POST', '/code/generate/batch', { key: brand, body: { items } });
    expect(response.status).toBe(200);
    const results = response.body.results as Array<{
      index: number;
      code?: { serial: string; url: string };
      error?: { code: string };
    }>;
    expect(results.map((result) => result.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(results.map((result) => result.error?.code ?? 'ok')).toEqual([
      'ok',
      'INVALID_GTIN',
      'MISSING_REQUIRED_FIELD',
      'DUPLICATE_SERIAL',
      'DUPLICATE_SERIAL',
      'VALIDATION_ERROR',
      'VALIDATION_ERROR',
      'ok',
    ]);
    expect((await verify(retailer, { url: results[0]?.code?.url })).body.verdict).toBe('AUTHENTIC');
    expect((await verify(retailer, { url: results[7]?.code?.url })).body.verdict).toBe('AUTHENTIC');
  });

  it('takes 10,000 items in one request, and refuses 10,001', async () => {
    const prefix = nextSerial();
    const items = Array.from({ length: 10_000 }, (_, i) => ({ gtin, serialNumber: `${prefix}-${i}` }));
    const response = await api('POST', '/code/generate/batch', { key: brand, body: { items } });
    expect(response.status).toBe(200);
    const results = response.body.results as Array<{ index: number; code?: unknown }>;
    expect(results).toHaveLength(10_000);
    expect(results.every((result, i) => result.index === i && result.code)).toBe(true);
    expectError(
      await api('POST', '/code/generate/batch', { key: brand, body: { items: [...items, items[0]] } }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('spends one unit of the generate quota per item', async () => {
    const operator = t.product.generatedOperatorKey as string;
    const created = await api('POST', '/accounts', { key: operator, body: { name: 'Free brand', tier: 'free' } });
    const free = created.body.apiKey.secret as string;
    // Its own GTIN, so its items are accepted: refused items would get their quota back.
    const ownGtin = '09506000134376';
    await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { gtin: ownGtin } });
    const items = Array.from({ length: 60 }, () => ({ gtin: ownGtin, serialNumber: nextSerial() }));
    // The quota counts per UTC day (the product's clock is the machine's here): both requests in one day.
    await earlyInWindow(86_400_000, 30_000);
    const first = await api('POST', '/code/generate/batch', { key: free, body: { items } });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('40');
    expectError(await api('POST', '/code/generate/batch', { key: free, body: { items } }), 429, 'RATE_LIMITED');
  });
});

describe('GET /code/qr', () => {
  const image = (key: string, query: string) => fetch(`${t.url}/api/v1/code/qr?${query}`, { headers: { 'x-api-key': key } });

  it('draws an SVG and a PNG that a QR reader decodes back to the link', async () => {
    const code = await generate(brand);
    const svg = await image(brand, `url=${encodeURIComponent(code.url)}`);
    expect(svg.status).toBe(200);
    expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await svg.text()).toMatch(/^<svg/);
    const png = await image(brand, `url=${encodeURIComponent(code.url)}&format=png&size=400`);
    expect(png.headers.get('content-type')).toBe('image/png');
    const decoded = PNG.sync.read(Buffer.from(await png.arrayBuffer()));
    expect(decoded.width).toBe(400);
    const read = jsQR(new Uint8ClampedArray(decoded.data), decoded.width, decoded.height);
    expect(read?.data).toBe(code.url);
  });

  it('sizes a PNG for 25 mm at 300 DPI and records the DPI', async () => {
    const code = await generate(brand);
    const png = Buffer.from(
      await (await image(brand, `url=${encodeURIComponent(code.url)}&format=png&mm=25&dpi=300`)).arrayBuffer(),
    );
    expect(png.readUInt32BE(16)).toBe(295);
    const pHYs = png.indexOf('pHYs');
    expect(pHYs).toBeGreaterThan(0);
    expect(png.readUInt32BE(pHYs + 4)).toBe(11811);
    expect(PNG.sync.read(png).width).toBe(295);
  });

  it('refuses a PNG with fewer than 2 pixels a module, and draws the smallest it takes readable at its size', async () => {
    // Too few pixels for the code's modules: the QR library drew 4 a module instead (10 mm at 72 dpi
    // came back 228 pixels, printing 80 mm wide), or uneven ones a reader could not tell apart
    // (64 pixels for 65 modules): a review of 2026-12-05.
    const code = await generate(brand);
    const link = `url=${encodeURIComponent(code.url)}&format=png`;
    const refusals: Array<{ minPixels: number; pixels: number; field: string }> = [];
    for (const [query, field] of [
      ['mm=10&dpi=72', 'mm'],
      ['size=64', 'size'],
    ] as const) {
      const response = await image(brand, `${link}&${query}`);
      const body = (await response.json()) as {
        error: { code: string; details: { minPixels: number; pixels: number; fields: Array<{ field: string }> } };
      };
      expect([query, response.status, body.error.code, body.error.details.fields[0]?.field]).toEqual([
        query,
        400,
        'VALIDATION_ERROR',
        field,
      ]);
      refusals.push({ ...body.error.details, field });
    }
    const { minPixels } = refusals[0] as { minPixels: number };
    expect(refusals.map((refusal) => refusal.pixels)).toEqual([28, 64]);
    const smallest = await image(brand, `${link}&size=${minPixels}`);
    expect(smallest.status).toBe(200);
    const decoded = PNG.sync.read(Buffer.from(await smallest.arrayBuffer()));
    expect(decoded.width).toBe(minPixels);
    expect(jsQR(new Uint8ClampedArray(decoded.data), decoded.width, decoded.height)?.data).toBe(code.url);
  });

  it('refuses a link that is not a code', async () => {
    const response = await image(brand, 'url=https%3A%2F%2Fexample.com%2Fhello');
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('INVALID_URL');
    expect((await image(brand, 'format=png')).status).toBe(400);
  });
});

describe('offline verification', () => {
  it('checks codes the service made against its published key set, with hallmark verify --offline', async () => {
    const code = await generate(brand, { batchNumber: 'OFF1' });
    const jwks = await call(t.url, 'GET', '/.well-known/jwks.json');
    const folder = await mkdtemp(join(tmpdir(), 'jwks-'));
    const file = join(folder, 'jwks.json');
    await writeFile(file, JSON.stringify(jwks.body));
    const cli = (link: string) =>
      run(process.execPath, [bin, 'verify', '--offline', '--jwks', file, link]).then(
        ({ stdout }) => ({ code: 0, stdout }),
        (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
      );
    try {
      const valid = await cli(code.url);
      expect(valid.code).toBe(0);
      expect(JSON.parse(valid.stdout)).toMatchObject({ valid: true, kid: code.keyId, serial: code.serial, batch: 'OFF1' });
      const altered = await cli(code.url.replace('/10/OFF1', '/10/OFF2'));
      expect(altered.code).toBe(1);
      expect(JSON.parse(altered.stdout)).toMatchObject({ valid: false });
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('POST /code/verify', () => {
  it('answers AUTHENTIC with every check and the scan history, counting this scan', async () => {
    const code = await generate(brand, { batchNumber: 'B1' });
    const first = await verify(retailer, { url: code.url });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      verdict: 'AUTHENTIC',
      confidence: expect.any(Number),
      gtin,
      serial: code.serial,
      batch: 'B1',
      checks: {
        signature: { passed: true, keyId: code.keyId, algorithm: 'Ed25519' },
        format: { passed: true, standard: 'GS1_DIGITAL_LINK' },
        scanPattern: { passed: true, scanNumber: 1, riskLevel: 'low' },
      },
      metadata: { firstSeen: expect.any(String), lastSeen: expect.any(String), totalScans: 1 },
      riskIndicators: [],
    });
    const second = await verify(brand, { content: `  ${code.url}\n` });
    expect(second.body.metadata.totalScans).toBe(2);
    expect(second.body.metadata.firstSeen).toBe(first.body.metadata.firstSeen);
  });

  it('accepts GS1 order, another host and the signature in AI 8030', async () => {
    const code = await generate(brand, { batchNumber: 'B2' });
    const moved = `https://id.brand.example/01/${gtin}/10/B2/21/${code.serial}?8030=${code.signature}`;
    expect((await verify(retailer, { url: moved })).body.verdict).toBe('AUTHENTIC');
  });

  it('answers the quickstart view', async () => {
    const code = await generate(brand);
    const response = await verify(retailer, { url: code.url }, '?view=quickstart');
    expect(response.body).toEqual({
      verdict: 'AUTHENTIC',
      confidence: expect.any(Number),
      gtin,
      serial: code.serial,
      checks: {
        signature: { passed: true, keyId: code.keyId, algorithm: 'Ed25519' },
        format: { passed: true, standard: 'GS1_DIGITAL_LINK' },
      },
      scanNumber: 1,
      firstSeen: expect.any(String),
      riskIndicators: [],
    });
  });

  it('answers COUNTERFEIT for an altered signature or altered data', async () => {
    const code = await generate(brand, { batchNumber: 'B3' });
    const forged = code.url.replace(/sig=(.)/, (_, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);
    const response = await verify(retailer, { url: forged });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ verdict: 'COUNTERFEIT', checks: { signature: { passed: false } } });
    expect((await verify(retailer, { url: code.url.replace('/10/B3', '/10/B4') })).body.verdict).toBe('COUNTERFEIT');
  });

  it('answers INVALID_URL, MISSING_SIGNATURE and KEY_NOT_FOUND', async () => {
    expectError(await verify(retailer, { url: 'not a link' }), 400, 'INVALID_URL');
    expectError(await verify(retailer, { url: `https://x.y/01/09506000134353/21/S?sig=${'a'.repeat(86)}` }), 400, 'INVALID_URL');
    expectError(await verify(retailer, { url: `https://x.y/01/${gtin}/21/S` }), 400, 'MISSING_SIGNATURE');
    // A GTIN whose owner has no key yet: nothing could have signed it.
    const operator = t.product.generatedOperatorKey as string;
    const newcomer = await api<{ account: { id: string } }>('POST', '/accounts', {
      key: operator,
      body: { name: 'New', tier: 'free' },
    });
    const unsignedGtin = '09506000134369';
    await api('POST', `/accounts/${newcomer.body.account.id}/gtins`, { key: operator, body: { gtin: unsignedGtin } });
    expectError(
      await verify(retailer, { url: `https://x.y/01/${unsignedGtin}/21/never-made?sig=${'a'.repeat(86)}` }),
      404,
      'KEY_NOT_FOUND',
    );
    // A made-up code of a GTIN whose owner has keys is a forgery of that owner's codes.
    expect((await verify(retailer, { url: `https://x.y/01/${gtin}/21/never-made?sig=${'a'.repeat(86)}` })).body.verdict).toBe(
      'COUNTERFEIT',
    );
  });

  it('wants exactly one of url and content', async () => {
    const code = await generate(brand);
    expectError(await verify(retailer, { url: code.url, content: code.url }), 400, 'VALIDATION_ERROR');
    expectError(await verify(retailer, {}), 400, 'VALIDATION_ERROR');
  });

  it('answers SUSPICIOUS with EXPIRED_CODE for a test code after 24 hours', async () => {
    const code = await generate(sandbox);
    expect((await verify(sandbox, { url: code.url })).body.verdict).toBe('AUTHENTIC');
    t.clock.advance(25 * 3_600_000);
    try {
      const later = await verify(sandbox, { url: code.url });
      expect(later.body).toMatchObject({
        verdict: 'SUSPICIOUS',
        riskIndicators: ['EXPIRED_CODE'],
        checks: { scanPattern: { riskLevel: 'high' } },
      });
    } finally {
      t.clock.advance(-25 * 3_600_000);
    }
  });

  it('answers SUSPICIOUS with GEOGRAPHIC_IMPOSSIBILITY for Paris then New York a minute apart', async () => {
    const code = await generate(brand);
    await verify(retailer, { url: code.url, location: { latitude: 48.8566, longitude: 2.3522 } });
    // Locations are judged against the same account's (another's claim is whatever it typed in).
    const elsewhere = await verify(brand, { url: code.url, location: { latitude: 40.7128, longitude: -74.006 } });
    expect(elsewhere.body).toMatchObject({ verdict: 'AUTHENTIC', riskIndicators: [] });
    const response = await verify(retailer, { url: code.url, location: { latitude: 40.7128, longitude: -74.006 } });
    expect(response.body).toMatchObject({ verdict: 'SUSPICIOUS', riskIndicators: ['GEOGRAPHIC_IMPOSSIBILITY'] });
  });

  it('answers SUSPICIOUS with KNOWN_COUNTERFEIT_PATTERN once the code’s owner confirms a report of it, not before', async () => {
    const code = await generate(brand);
    const report = await api('POST', '/code/report', { key: retailer, body: { url: code.url, reason: 'label on a fake' } });
    expect(report.status).toBe(201);
    expect(report.body).toMatchObject({ reportId: expect.stringMatching(/^rep_/), gtin, serial: code.serial, status: 'pending' });
    expect((await verify(retailer, { url: code.url })).body).toMatchObject({ verdict: 'AUTHENTIC', riskIndicators: [] });
    const confirmed = await api('POST', `/code/reports/${report.body.reportId}/confirm`, { key: brand });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    // Confirmed without a reason of the owner's: the reporter's words (anyone's) are not published.
    expect(confirmed.body).toMatchObject({ status: 'confirmed', reason: 'label on a fake', blockReason: null });
    expect((await verify(retailer, { url: code.url })).body).toMatchObject({
      verdict: 'SUSPICIOUS',
      riskIndicators: ['KNOWN_COUNTERFEIT_PATTERN'],
      checks: { scanPattern: { passed: false, riskLevel: 'critical' } },
      confirmedReport: { reason: null },
    });
    expectError(await api('POST', '/code/report', { key: retailer, body: { url: 'nope' } }), 400, 'INVALID_URL');
  });

  it('answers SUSPICIOUS with EXCESSIVE_SCANS past 20 scans an hour, but not for one client retrying', async () => {
    const code = await generate(brand);
    for (let i = 0; i < 25; i++) expect((await verify(retailer, { url: code.url })).body.verdict).toBe('AUTHENTIC');
    // 21 other clients: a client is an address (more keys from one address would be one client).
    // biome-ignore lint/suspicious/noExplicitAny: a verification body
    let last: ApiResponse<any> | undefined;
    for (let i = 0; i < 21; i++) {
      last = await callFrom(newClientAddress(), t.url, 'POST', '/api/v1/code/verify', { key: retailer, body: { url: code.url } });
    }
    expect(last?.body.riskIndicators).toContain('EXCESSIVE_SCANS');
    expect(last?.body.metadata.totalScans).toBe(46);
  });

  it('counts 200 parallel verifications of one code exactly: totalScans 200', async () => {
    const code = await generate(brand);
    const responses = await Promise.all(Array.from({ length: 200 }, () => verify(retailer, { url: code.url })));
    expect(responses.every((response) => response.status === 200)).toBe(true);
    const numbers = responses.map((response) => response.body.metadata.totalScans as number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect((await verify(retailer, { url: code.url })).body.metadata.totalScans).toBe(201);
  });

  it('needs the assets:verify scope', async () => {
    const reader = (await api('POST', '/keys', { key: retailer, body: { name: 'reader', scopes: ['assets:read'] } })).body
      .secret as string;
    expectError(await verify(reader, { url: 'x' }), 403, 'INSUFFICIENT_SCOPE');
  });
});
