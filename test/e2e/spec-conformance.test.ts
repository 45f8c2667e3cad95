import { createPublicKey } from 'node:crypto';
import { connect } from 'node:net';
import { generateEd25519KeyPair } from '@hallmark/crypto';
import { gs1CheckDigit } from '@hallmark/gs1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// A review of the running product against ../shared/spec/interface-spec.md (the contract),
// ../shared/spec/DECISIONS.md (what the spec left open, decided) and docs/API.md, over real
// HTTP against the embedded product. Each test asserts what the documents say, quoted beside it.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let operator: string;
const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

interface Tenant {
  id: string;
  key: string;
  prefix: string;
}

let brand: Tenant;
let freeTenant: Tenant;
let counter = 0;

/** The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410), before the key's 32 bytes. */
const ed25519SpkiPrefix = Buffer.from('302a300506032b6570032100', 'hex');

/** A GTIN-14 under `prefix` (indicator 0), with its check digit. */
function gtinUnder(prefix: string): string {
  counter += 1;
  const digits = `0${prefix}${String(counter).padStart(12 - prefix.length, '0')}`;
  return `${digits}${gs1CheckDigit(digits)}`;
}

let serialCounter = 0;
const nextSerial = () => `RV${Date.now().toString(36)}${++serialCounter}`.slice(0, 20);

async function tenant(name: string, tier: 'free' | 'starter' | 'enterprise', prefix: string): Promise<Tenant> {
  const created = await api('POST', '/accounts', { key: operator, body: { name, tier } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.account.id as string;
  const grant = await api('POST', `/accounts/${id}/gtins`, { key: operator, body: { prefix } });
  expect(grant.status, JSON.stringify(grant.body)).toBe(201);
  return { id, key: created.body.apiKey.secret as string, prefix };
}

async function generate(owner: Tenant, body: Json = {}): Promise<ApiResponse<Json>> {
  const response = await api('POST', '/code/generate', {
    key: owner.key,
    body: { gtin: gtinUnder(owner.prefix), serialNumber: nextSerial(), ...body },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response;
}

/** The next 00:00 UTC after the product's clock, in Unix seconds. */
function nextUtcMidnightSeconds(): number {
  const now = t.clock.now();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) / 1000;
}

/** Sends raw bytes on a new connection; resolves with what the server sent before it closed. */
function rawExchange(request: string): Promise<string> {
  const { port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(text);
    }, 5_000);
    socket.on('data', (data) => {
      text += data.toString('utf8');
    });
    socket.on('end', () => {
      clearTimeout(timer);
      resolve(text);
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      if (text) resolve(text);
      else reject(error);
    });
    socket.write(request);
  });
}

/** Header names (lower case) → values of a raw HTTP/1.1 answer. */
function headersOf(raw: string): Record<string, string> {
  const head = raw.split('\r\n\r\n')[0] ?? '';
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

beforeAll(async () => {
  t = await startTestProduct();
  operator = t.product.generatedOperatorKey as string;
  brand = await tenant('Review Brand', 'enterprise', '9506011');
  freeTenant = await tenant('Review Free', 'free', '9506012');
});

afterAll(async () => {
  await t?.stop();
});

describe('Responses and errors (DECISIONS.md "Every response carries X-Request-Id"; API.md "Headers on every answer")', () => {
  it('a 431 for headers over 16 KB carries X-Request-Id (matching meta.requestId), nosniff and, with x-api-key, Cache-Control: no-store', async () => {
    const response = await fetch(`${t.url}/api/v1/keys`, {
      headers: { 'x-api-key': brand.key, 'x-filler': 'a'.repeat(20_000) },
    });
    const body = (await response.json()) as Json;
    expect(response.status).toBe(431);
    expect(body.error.code).toBe('REQUEST_HEADERS_TOO_LARGE');
    expect(response.headers.get('x-request-id'), 'X-Request-Id').toBe(body.meta.requestId);
    expect(response.headers.get('x-content-type-options'), 'X-Content-Type-Options').toBe('nosniff');
    expect(response.headers.get('cache-control') ?? '', 'Cache-Control').toContain('no-store');
  });

  it('a request Node cannot parse (400 VALIDATION_ERROR in the envelope) carries X-Request-Id and nosniff', async () => {
    const raw = await rawExchange('GET /health HTTP/1.1\r\nHost: localhost\r\nThis is not a header\r\n\r\n');
    expect(raw.split('\r\n')[0]).toMatch(/^HTTP\/1\.1 400/);
    const body = JSON.parse(raw.split('\r\n\r\n')[1] ?? '{}') as Json;
    expect(body.error?.code).toBe('VALIDATION_ERROR');
    const headers = headersOf(raw);
    expect(headers['x-request-id'], 'X-Request-Id').toBe(body.meta?.requestId);
    expect(headers['x-content-type-options'], 'X-Content-Type-Options').toBe('nosniff');
  });

  it('an unknown version segment is 404 NOT_FOUND in the envelope (spec, Versioning 1: v1 is the version)', async () => {
    const response = await call<Json>(t.url, 'GET', '/api/v2/keys', { key: brand.key });
    expect(response.status).toBe(404);
    expect(response.body.error?.code).toBe('NOT_FOUND');
    expect(response.body.meta?.requestId).toBe(response.headers.get('x-request-id'));
  });
});

describe('POST /code/generate: INVALID_GTIN (spec, Errors 5; DECISIONS.md, Codes)', () => {
  it('answers INVALID_GTIN with { provided, expected } for any GTIN that is not 14 digits, however long', async () => {
    for (const gtin of ['123', '095060001343521', '9'.repeat(65), `0${'1'.repeat(99)}`]) {
      const response = await api('POST', '/code/generate', { key: brand.key, body: { gtin, serialNumber: nextSerial() } });
      expect(
        [response.status, response.body.error?.code],
        `gtin of ${gtin.length} characters: ${JSON.stringify(response.body)}`,
      ).toEqual([400, 'INVALID_GTIN']);
      // What was sent, its first 64 characters and … when longer (docs/API.md, Generate).
      const provided = gtin.length > 64 ? `${gtin.slice(0, 64)}…` : gtin;
      expect(response.body.error?.details?.provided, `gtin of ${gtin.length} characters`).toBe(provided);
      expect(response.body.error?.details?.expected, `gtin of ${gtin.length} characters`).toEqual(expect.any(String));
    }
  });

  it('answers INVALID_GTIN for a too-long GTIN inside a batch item too', async () => {
    const response = await api('POST', '/code/generate/batch', {
      key: brand.key,
      body: { items: [{ gtin: '9'.repeat(65), serialNumber: nextSerial() }] },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.results[0]?.error?.code, JSON.stringify(response.body.results[0])).toBe('INVALID_GTIN');
  });
});

describe('Keys (DECISIONS.md, Keys and auth)', () => {
  it('POST /keys with name, publicKey (base64url raw 32 bytes, or PEM) and algorithm "Ed25519" registers a public key (201, type public)', async () => {
    for (const encoding of ['raw', 'pem'] as const) {
      const pair = generateEd25519KeyPair();
      const publicKey =
        encoding === 'raw'
          ? pair.publicKey.toString('base64url')
          : createPublicKey({ key: Buffer.concat([ed25519SpkiPrefix, pair.publicKey]), format: 'der', type: 'spki' })
              .export({ format: 'pem', type: 'spki' })
              .toString();
      const response = await api('POST', '/keys', {
        key: brand.key,
        body: { name: `Factory HSM ${encoding}`, publicKey, algorithm: 'Ed25519' },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      expect(response.body).toMatchObject({ type: 'public', status: 'active', environment: 'live' });
      const listed = await api('GET', '/keys?type=public', { key: brand.key });
      expect((listed.body.keys as Json[]).map((key) => key.id)).toContain(response.body.id);
    }
  });
});

describe('Limits (spec, Limits 1-4; DECISIONS.md, Keys and auth)', () => {
  it('carries X-RateLimit-Limit/Remaining/Reset as integers; a free account’s generate limit is 100 a day, resetting at 00:00 UTC', async () => {
    const response = await generate(freeTenant);
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
      expect(response.headers.get(name), name).toMatch(/^[0-9]+$/);
    }
    expect(response.headers.get('x-ratelimit-limit')).toBe('100');
    expect(Number(response.headers.get('x-ratelimit-reset'))).toBe(nextUtcMidnightSeconds());
  });

  it('a replayed Idempotency-Key answer still carries the X-RateLimit headers (spec, Limits 4: "Responses carry headers")', async () => {
    const body = { gtin: gtinUnder(brand.prefix), serialNumber: nextSerial() };
    const headers = { 'idempotency-key': `review-${Date.now()}` };
    const first = await api('POST', '/code/generate', { key: brand.key, body, headers });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const replay = await api('POST', '/code/generate', { key: brand.key, body, headers });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
      expect(replay.headers.get(name), name).toMatch(/^[0-9]+$/);
    }
  });
});

describe('Generated code without a batch (spec, Resources: Generated code)', () => {
  it('has no batch field and no /10/ segment; sig is the signature field, base64url without padding', async () => {
    const code = (await generate(brand)).body;
    expect(code).not.toHaveProperty('batch');
    // The host is HALLMARK_RESOLVER_URL (default http://localhost:$PORT; started on PORT=0, the product writes 8080).
    expect(code.url).toMatch(new RegExp(`^http://localhost:[0-9]+/01/${code.gtin}/21/${code.serial}\\?sig=`));
    expect(code.url).not.toContain('/10/');
    expect(new URL(code.url).searchParams.get('sig')).toBe(code.signature);
    expect(code.signature).toMatch(/^[A-Za-z0-9_-]+$/);
    for (const field of ['url', 'gtin', 'serial', 'signature', 'keyId', 'createdAt'])
      expect(typeof code[field], field).toBe('string');
  });
});

describe('Auction registration without ownerId (DECISIONS.md, Auction: "optional ownerId (default: the account)")', () => {
  it('records the account as the first owner, and a transfer from the account’s id goes through', async () => {
    const registered = await api('POST', '/auction/objects/register', {
      key: brand.key,
      body: { title: 'Carriage clock', category: 'watch' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    expect(registered.body.object.status).toBe('consigned');
    expect(registered.body.qr_data.serial).toBe(registered.body.object.service_serial);
    const history = await api('GET', `/auction/objects/${registered.body.object.service_serial}/provenance`, { key: brand.key });
    expect(history.status).toBe(200);
    expect(history.body.chain_of_custody[0]).toMatchObject({ from: null, to: brand.id, transfer_type: 'registration' });
    const started = await api('POST', '/auction/transfers/initiate', {
      key: brand.key,
      body: {
        objectId: registered.body.object.id,
        fromOwnerId: brand.id,
        toOwnerId: 'buyer-9',
        salePrice: 10,
        saleCurrency: 'EUR',
      },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const confirmed = await api('POST', `/auction/transfers/${started.body.transferId}/confirm`, {
      key: brand.key,
      body: { transferCode: started.body.transferCode },
    });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    expect(confirmed.body.status).toBe('completed');
    const after = await api('GET', `/auction/objects/${registered.body.object.id}/provenance`, { key: brand.key });
    expect(after.body.chain_of_custody.at(-1)).toMatchObject({ from: brand.id, to: 'buyer-9', transfer_type: 'sale' });
    const publicView = await call<Json>(t.url, 'GET', `/api/v1/auction/public/verify/${registered.body.object.service_serial}`);
    expect(publicView.status).toBe(200);
    expect(publicView.body.provenance.current_owner).toBe('Private Collector');
    expect(JSON.stringify(publicView.body)).not.toContain(brand.id);
    expect(JSON.stringify(publicView.body)).not.toContain('buyer-9');
    expect(JSON.stringify(publicView.body)).not.toContain(registered.body.object.id);
  });
});

describe('Public verification takes no authentication (spec, Endpoints: Auction; Authentication 1)', () => {
  it('answers the public verification even when a client sends a stale x-api-key along', async () => {
    const registered = await api('POST', '/auction/objects/register', {
      key: brand.key,
      body: { title: 'Magnum 1961', category: 'bottle' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const serial = registered.body.object.service_serial as string;
    const withoutKey = await call<Json>(t.url, 'GET', `/api/v1/auction/public/verify/${serial}`);
    expect(withoutKey.status).toBe(200);
    const withBadKey = await call<Json>(t.url, 'GET', `/api/v1/auction/public/verify/${serial}`, {
      key: `svc_live_${'0'.repeat(64)}`,
    });
    expect(withBadKey.status, JSON.stringify(withBadKey.body)).toBe(200);
  });
});
