// Time and expiry boundaries, over real HTTP against the embedded product with its movable clock (a
// review of 2026-12-04). A counterfeiter with a script, or a tenant gaming limits, probes the exact
// millisecond a key, a transfer code or a printed code stops being good, the UTC midnight that
// resets daily quotas, the host's time zone, and a clock that steps backwards. Each test states what
// a careful user of the API expects from interface-spec.md, DECISIONS.md and docs/API.md. Found and
// fixed: an expiryDate without an offset printed another day on a server outside UTC; a key rotated
// twice in its grace got a replacement that expired; a key's createdAt came from the database's clock.
// Runs paired (vitest.config.ts): its clock is the product's frozen one, and the one test that sets
// process.env.TZ sets it in its own worker process and puts it back.
import { signCode } from '@hallmark/codes';
import { ed25519PrivateKeyObject, ed25519Thumbprint, generateEd25519KeyPair } from '@hallmark/crypto';
import { formatDigitalLink } from '@hallmark/gs1';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { publicKeyRegistration } from '../support/public-keys.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let operator: string;

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

const at = (iso: string) => t.clock.freeze(new Date(iso));
const ms = (iso: string) => Date.parse(iso);

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code, JSON.stringify(response.body)).toBe(code);
}

/** A GTIN-14 with a valid GS1 check digit, from 13 digits. */
function gtinOf(first13: string): string {
  const sum = [...first13].reduce((acc, digit, index) => acc + Number(digit) * (index % 2 === 0 ? 3 : 1), 0);
  return `${first13}${(10 - (sum % 10)) % 10}`;
}

let gtinCounter = 0;
/** A fresh GTIN for each tenant, so no test's codes meet another's. */
const freshGtin = () => gtinOf(`950600${String(7_100_000 + ++gtinCounter).padStart(7, '0')}`);

async function tenant(tier: 'free' | 'starter' | 'enterprise', name = 'Tenant') {
  const created = await api('POST', '/accounts', { key: operator, body: { name: `${name} ${Math.random()}`, tier } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return {
    id: created.body.account.id as string,
    key: created.body.apiKey.secret as string,
    keyId: created.body.apiKey.id as string,
  };
}

async function grant(accountId: string, gtin: string) {
  const granted = await api('POST', `/accounts/${accountId}/gtins`, { key: operator, body: { gtin } });
  expect(granted.status, JSON.stringify(granted.body)).toBe(201);
}

beforeAll(async () => {
  t = await startTestProduct();
  operator = t.product.generatedOperatorKey as string;
}, 120_000);

afterEach(() => {
  t.clock.freeze(undefined);
});

afterAll(async () => {
  await t?.stop();
});

describe('API keys at the millisecond of their expiry', () => {
  it('works one ms before expiresAt and answers EXPIRED_API_KEY at it; a child never outlives it; a rotation’s grace ends exactly when answered', async () => {
    const admin = await tenant('enterprise', 'Keys');
    at('2031-01-10T10:00:00.000Z');
    const created = await api('POST', '/keys', {
      key: admin.key,
      body: { name: 'hour', scopes: ['keys:read', 'keys:write', 'assets:read'], expiresIn: '1h' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.expiresAt).toBe('2031-01-10T11:00:00.000Z');
    const hourKey = created.body.secret as string;

    // A child made without expiresIn, and one asking for ten years, both end with their creator.
    const child = await api('POST', '/keys', { key: hourKey, body: { name: 'child', scopes: ['assets:read'] } });
    expect(child.status, JSON.stringify(child.body)).toBe(201);
    expect(child.body.expiresAt).toBe('2031-01-10T11:00:00.000Z');
    const longChild = await api('POST', '/keys', {
      key: hourKey,
      body: { name: 'long', scopes: ['assets:read'], expiresIn: '10y' },
    });
    expect(longChild.body.expiresAt).toBe('2031-01-10T11:00:00.000Z');

    // A rotation by the expiring key: the new key is capped at its asker's expiry too.
    const target = await api('POST', '/keys', { key: admin.key, body: { name: 'target', scopes: ['assets:read'] } });
    expect(target.status).toBe(201);
    at('2031-01-10T10:30:00.000Z');
    const rotated = await api('POST', `/keys/${target.body.id}/rotate`, { key: hourKey, body: { graceSeconds: 900 } });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    expect(rotated.body.expiresAt).toBe('2031-01-10T11:00:00.000Z');
    expect(rotated.body.replaced).toEqual({ id: target.body.id, expiresAt: '2031-01-10T10:45:00.000Z' });

    // The old key of the rotation: good until one ms before the grace ends, refused at its end.
    at('2031-01-10T10:44:59.999Z');
    expect((await api('GET', '/codes', { key: target.body.secret })).status).toBe(200);
    at('2031-01-10T10:45:00.000Z');
    const graceOver = await api('GET', '/codes', { key: target.body.secret });
    expectError(graceOver, 401, 'EXPIRED_API_KEY');
    expect(graceOver.body.error?.details?.expiredAt).toBe('2031-01-10T10:45:00.000Z');

    at('2031-01-10T10:59:59.999Z');
    expect((await api('GET', '/keys', { key: hourKey })).status).toBe(200);
    expect((await api('GET', '/codes', { key: child.body.secret })).status).toBe(200);
    expect((await api('GET', '/codes', { key: rotated.body.secret })).status).toBe(200);
    at('2031-01-10T11:00:00.000Z');
    for (const secret of [hourKey, child.body.secret, longChild.body.secret, rotated.body.secret]) {
      const refused = await api('GET', '/codes', { key: secret });
      expectError(refused, 401, 'EXPIRED_API_KEY');
      expect(refused.body.error?.details?.expiredAt).toBe('2031-01-10T11:00:00.000Z');
    }
    // The listing says what the keys do at that instant.
    const listed = await api('GET', '/keys?type=api&limit=100', { key: admin.key });
    const statusOf = (id: string) => listed.body.keys.find((key: Json) => key.id === id)?.status;
    expect(statusOf(created.body.id)).toBe('expired');
    expect(statusOf(child.body.id)).toBe('expired');
    expect(statusOf(target.body.id)).toBe('expired');
  });

  it('gives a key that never expires a replacement that never expires, also when it is rotated again during its grace', async () => {
    const admin = await tenant('enterprise', 'Rotations');
    at('2031-01-01T00:00:00.000Z');
    const forever = await api('POST', '/keys', { key: admin.key, body: { name: 'ci', scopes: ['assets:read'] } });
    expect(forever.status).toBe(201);
    expect(forever.body.expiresAt).toBeNull();
    at('2031-01-31T00:00:00.000Z');
    const first = await api('POST', `/keys/${forever.body.id}/rotate`, { key: admin.key, body: { graceSeconds: 86400 } });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.expiresAt).toBeNull();
    expect(first.body.replaced).toEqual({ id: forever.body.id, expiresAt: '2031-02-01T00:00:00.000Z' });
    // The admin rotates it again a minute later (a second deploy, or a retry without an
    // Idempotency-Key), the old key still in its grace. Found (fixed): a second replacement was made,
    // its lifetime read off the expiry the first rotation had shortened, so it silently expired a
    // month later. Now a key is replaced once: 409, naming its replacement (docs/API.md).
    at('2031-01-31T00:01:00.000Z');
    const second = await api('POST', `/keys/${forever.body.id}/rotate`, { key: admin.key, body: { graceSeconds: 900 } });
    expectError(second, 409, 'CONFLICT');
    expect(second.body.error?.details).toEqual({ id: forever.body.id, replacedBy: first.body.id });
    // Its replacement rotates as any key does, with the lifetime of the key it replaced: none.
    const third = await api('POST', `/keys/${first.body.id}/rotate`, { key: admin.key, body: { graceSeconds: 900 } });
    expect(third.status, JSON.stringify(third.body)).toBe(201);
    expect(third.body.expiresAt).toBeNull();
  });

  it('gives a 90-day key’s replacement 90 days from the rotation, and dates a key by the clock its expiry is counted on', async () => {
    const admin = await tenant('enterprise', 'Lifetime clock');
    at('2031-04-01T00:00:00.000Z');
    const quarterly = await api('POST', '/keys', {
      key: admin.key,
      body: { name: 'quarterly', scopes: ['assets:read'], expiresIn: '90d' },
    });
    expect(quarterly.status, JSON.stringify(quarterly.body)).toBe(201);
    expect(quarterly.body.expiresAt).toBe('2031-06-30T00:00:00.000Z');
    // createdAt + expiresIn = expiresAt: both read on the product's clock.
    expect(quarterly.body.createdAt, 'createdAt of a key made at 2031-04-01T00:00:00Z').toBe('2031-04-01T00:00:00.000Z');
    // An account and its first key likewise (their account.created and key.issued events' time).
    const account = await api('POST', '/accounts', { key: operator, body: { name: `Dated ${Math.random()}`, tier: 'free' } });
    expect(account.status, JSON.stringify(account.body)).toBe(201);
    expect([account.body.account.createdAt, account.body.apiKey.createdAt]).toEqual([
      '2031-04-01T00:00:00.000Z',
      '2031-04-01T00:00:00.000Z',
    ]);
    at('2031-06-20T00:00:00.000Z');
    const rotated = await api('POST', `/keys/${quarterly.body.id}/rotate`, { key: admin.key, body: { graceSeconds: 3600 } });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    expect(rotated.body.replaced).toEqual({ id: quarterly.body.id, expiresAt: '2031-06-20T01:00:00.000Z' });
    expect(rotated.body.expiresAt, 'the replacement lives 90 days from the rotation').toBe('2031-09-18T00:00:00.000Z');
  });

  it('refuses an expiresIn beyond ten years in any unit, and takes ten years exactly', async () => {
    const admin = await tenant('enterprise', 'Lifetimes');
    at('2031-02-01T00:00:00.000Z');
    const tenYears = await api('POST', '/keys', {
      key: admin.key,
      body: { name: 'y', scopes: ['assets:read'], expiresIn: '10y' },
    });
    expect(tenYears.status, JSON.stringify(tenYears.body)).toBe(201);
    const longest = Date.parse(tenYears.body.expiresAt) - ms('2031-02-01T00:00:00.000Z');
    for (const expiresIn of [
      '11y',
      `${longest / 86_400_000 + 1}d`,
      `${longest / 3_600_000 + 1}h`,
      `${longest / 60_000 + 1}m`,
      '999999w',
    ]) {
      const refused = await api('POST', '/keys', { key: admin.key, body: { name: 'x', scopes: ['assets:read'], expiresIn } });
      expectError(refused, 400, 'VALIDATION_ERROR');
    }
    for (const expiresIn of ['0m', '-1h', '1.5h', ' 1h', '1H', '01h']) {
      const refused = await api('POST', '/keys', { key: admin.key, body: { name: 'x', scopes: ['assets:read'], expiresIn } });
      expect(refused.status, `${expiresIn}: ${JSON.stringify(refused.body)}`).toBe(400);
    }
  });
});

describe('transfer codes at the millisecond of their expiry, and the lock across time', () => {
  let house: { id: string; key: string };
  const register = async (title: string) => {
    const registered = await api('POST', '/auction/objects/register', {
      key: house.key,
      body: { title, category: 'watch', ownerId: 'client-jane' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    return registered.body.object.id as string;
  };
  const initiate = (objectId: string, fromOwnerId = 'client-jane', toOwnerId = 'buyer-1') =>
    api('POST', '/auction/transfers/initiate', {
      key: house.key,
      body: { objectId, fromOwnerId, toOwnerId, salePrice: 900, saleCurrency: 'EUR' },
    });
  const confirm = (transferId: string, transferCode: string) =>
    api('POST', `/auction/transfers/${transferId}/confirm`, { key: house.key, body: { transferCode } });
  const wrongCodeFor = (code: string) => (code === '000000' ? '111111' : '000000');

  beforeAll(async () => {
    house = await tenant('enterprise', 'House');
  });

  it('confirms one ms before expiresAt (72 h), answers 410 GONE at it, and lets the seller start again at once', async () => {
    at('2031-03-01T09:00:00.000Z');
    const first = await register('Boundary watch A');
    const started = await initiate(first);
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(started.body.expiresAt).toBe('2031-03-04T09:00:00.000Z');
    at('2031-03-04T08:59:59.999Z');
    const inTime = await confirm(started.body.transferId, started.body.transferCode);
    expect(inTime.status, JSON.stringify(inTime.body)).toBe(200);
    expect(inTime.body.status).toBe('completed');

    at('2031-03-01T09:00:00.000Z');
    const second = await register('Boundary watch B');
    const late = await initiate(second);
    expect(late.status).toBe(201);
    at('2031-03-04T09:00:00.000Z');
    const tooLate = await confirm(late.body.transferId, late.body.transferCode);
    expectError(tooLate, 410, 'GONE');
    // The clock stepping back a second (NTP) does not bring an expired transfer back.
    at('2031-03-04T08:59:59.000Z');
    expectError(await confirm(late.body.transferId, late.body.transferCode), 410, 'GONE');
    // Started again: a new code, good for 72 h from now; the old code completes nothing.
    at('2031-03-04T09:00:00.000Z');
    const again = await initiate(second);
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.expiresAt).toBe('2031-03-07T09:00:00.000Z');
    const oldCode = await confirm(again.body.transferId, late.body.transferCode);
    if (late.body.transferCode !== again.body.transferCode) expectError(oldCode, 400, 'VALIDATION_ERROR');
    const done = await confirm(again.body.transferId, again.body.transferCode);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
  });

  it('keeps counting wrong codes across days (no reset by time), locks at the fifth, and stays locked', async () => {
    at('2031-03-10T09:00:00.000Z');
    const objectId = await register('Slow guesser');
    const started = await initiate(objectId);
    expect(started.status).toBe(201);
    const wrong = wrongCodeFor(started.body.transferCode);
    for (let i = 0; i < 4; i++) {
      at(new Date(ms('2031-03-10T09:00:00.000Z') + i * 17 * 3_600_000).toISOString());
      const refused = await confirm(started.body.transferId, wrong);
      expectError(refused, 400, 'VALIDATION_ERROR');
      expect(refused.body.error?.details?.attemptsRemaining).toBe(4 - i);
    }
    at('2031-03-13T08:59:59.999Z');
    const fifth = await confirm(started.body.transferId, wrong);
    expectError(fifth, 400, 'VALIDATION_ERROR');
    expect(fifth.body.error?.details).toMatchObject({ attemptsRemaining: 0, locked: true });
    expectError(await confirm(started.body.transferId, started.body.transferCode), 409, 'CONFLICT');
    // Past its expiry the locked transfer stays locked (not re-opened, not completed).
    at('2031-03-13T09:00:00.001Z');
    const later = await confirm(started.body.transferId, started.body.transferCode);
    expect([409, 410]).toContain(later.status);
    // The object is free again for a new transfer.
    const again = await initiate(objectId);
    expect(again.status, JSON.stringify(again.body)).toBe(201);
  });
});

describe('codes with an expiry date (AI 17) at the UTC day boundary', () => {
  let brand: { id: string; key: string };
  const gtin = freshGtin();
  const verdictOf = async (url: string) => {
    const verified = await api('POST', '/code/verify', { key: brand.key, body: { url } });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    return { verdict: verified.body.verdict as string, indicators: verified.body.riskIndicators as string[] };
  };

  beforeAll(async () => {
    brand = await tenant('enterprise', 'Pharma');
    await grant(brand.id, gtin);
  });

  it('takes an expiry date of today, which verifies until 23:59:59.999 UTC and is EXPIRED_CODE from 00:00 UTC', async () => {
    at('2031-03-31T23:59:59.999Z');
    const today = await api('POST', '/code/generate', {
      key: brand.key,
      body: { gtin, serialNumber: 'TODAY-1', expiryDate: '2031-03-31' },
    });
    expect(today.status, JSON.stringify(today.body)).toBe(201);
    expect(today.body.expiryDate).toBe('2031-03-31');
    expect(today.body.expiresAt).toBe('2031-04-01T00:00:00.000Z');
    expect(new URL(today.body.url).searchParams.get('17')).toBe('310331');
    expect(await verdictOf(today.body.url)).toEqual({ verdict: 'AUTHENTIC', indicators: [] });
    at('2031-04-01T00:00:00.000Z');
    expect(await verdictOf(today.body.url)).toEqual({ verdict: 'SUSPICIOUS', indicators: ['EXPIRED_CODE'] });
    // Yesterday's date is refused now.
    const yesterday = await api('POST', '/code/generate', {
      key: brand.key,
      body: { gtin, serialNumber: 'TODAY-2', expiryDate: '2031-03-31' },
    });
    expectError(yesterday, 400, 'VALIDATION_ERROR');
  });

  it('expires a test-key code 24 h after creation, or at the end of its expiry date when that is sooner', async () => {
    const sandbox = await api('POST', '/keys', { key: brand.key, body: { name: 'sandbox', scopes: ['*'], environment: 'test' } });
    expect(sandbox.status).toBe(201);
    at('2031-05-10T18:00:00.000Z');
    const plain = await api('POST', '/code/generate', { key: sandbox.body.secret, body: { gtin, serialNumber: 'T-24H' } });
    expect(plain.status, JSON.stringify(plain.body)).toBe(201);
    expect(plain.body.expiresAt).toBe('2031-05-11T18:00:00.000Z');
    const dated = await api('POST', '/code/generate', {
      key: sandbox.body.secret,
      body: { gtin, serialNumber: 'T-DATED', expiryDate: '2031-05-10' },
    });
    expect(dated.status, JSON.stringify(dated.body)).toBe(201);
    expect(dated.body.expiresAt).toBe('2031-05-11T00:00:00.000Z');
    const testVerdict = async (url: string) =>
      (await api('POST', '/code/verify', { key: sandbox.body.secret, body: { url } })).body.riskIndicators;
    at('2031-05-11T17:59:59.999Z');
    expect(await testVerdict(plain.body.url)).toEqual([]);
    at('2031-05-11T18:00:00.000Z');
    expect(await testVerdict(plain.body.url)).toEqual(['EXPIRED_CODE']);
  });

  it('reads a date-time without an offset the same on any host: the printed AI 17 does not depend on the server’s time zone', async () => {
    // docs/API.md: expiryDate "an ISO 8601 date or date-time … written as AI 17 (YYMMDD, UTC)". The
    // same request must print the same date whether the product runs in UTC or, as `pnpm start` on
    // an operator's laptop does, in New York: either refused (no offset) or read as UTC.
    at('2031-06-01T12:00:00.000Z');
    const previousTz = process.env.TZ;
    const printed: Record<string, string> = {};
    let serial = 0;
    try {
      for (const zone of ['UTC', 'America/New_York', 'Pacific/Kiritimati']) {
        process.env.TZ = zone;
        for (const expiryDate of ['2031-06-30T23:30:00', '2031-06-30T05:00:00']) {
          const answer = await api('POST', '/code/generate', {
            key: brand.key,
            body: { gtin, serialNumber: `FLOAT-${serial++}`, expiryDate },
          });
          printed[`${expiryDate} on a host in ${zone}`] =
            answer.status === 201
              ? `AI 17 ${new URL(answer.body.url).searchParams.get('17')}, expiresAt ${answer.body.expiresAt}`
              : `${answer.status}`;
        }
      }
    } finally {
      if (previousTz === undefined) delete process.env.TZ;
      else process.env.TZ = previousTz;
    }
    const late = printed['2031-06-30T23:30:00 on a host in UTC'];
    const early = printed['2031-06-30T05:00:00 on a host in UTC'];
    expect(printed, 'the same expiryDate printed the same AI 17 in every server time zone').toEqual({
      '2031-06-30T23:30:00 on a host in UTC': late,
      '2031-06-30T05:00:00 on a host in UTC': early,
      '2031-06-30T23:30:00 on a host in America/New_York': late,
      '2031-06-30T05:00:00 on a host in America/New_York': early,
      '2031-06-30T23:30:00 on a host in Pacific/Kiritimati': late,
      '2031-06-30T05:00:00 on a host in Pacific/Kiritimati': early,
    });
  });

  describe('a code the brand signed elsewhere (registered public key): AI 17 day 00 and the century', () => {
    const hsm = generateEd25519KeyPair();
    const kid = ed25519Thumbprint(hsm.publicKey);
    const printed = (serial: string, expiry: string) =>
      formatDigitalLink({
        origin: 'https://brand.example',
        gtin,
        serial,
        expiry,
        signature: signCode(ed25519PrivateKeyObject(hsm), { kid, gtin, serial, expiry }),
      });

    beforeAll(async () => {
      t.clock.freeze(undefined);
      const registered = await api('POST', '/keys', {
        key: brand.key,
        body: publicKeyRegistration(hsm, { accountId: brand.id }),
      });
      expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    });

    it('reads day 00 as the end of the month, in a leap year too (GS1 GenSpecs 7.12)', async () => {
      const february = printed('DD00-1', '310200');
      at('2031-02-28T23:59:59.999Z');
      expect(await verdictOf(february)).toEqual({ verdict: 'AUTHENTIC', indicators: [] });
      at('2031-03-01T00:00:00.000Z');
      expect(await verdictOf(february)).toEqual({ verdict: 'SUSPICIOUS', indicators: ['EXPIRED_CODE'] });
      const leap = printed('DD00-2', '320200');
      at('2032-02-29T23:59:59.999Z');
      expect(await verdictOf(leap)).toEqual({ verdict: 'AUTHENTIC', indicators: [] });
      at('2032-03-01T00:00:00.000Z');
      expect(await verdictOf(leap)).toEqual({ verdict: 'SUSPICIOUS', indicators: ['EXPIRED_CODE'] });
      const december = printed('DD00-3', '311200');
      at('2031-12-31T23:59:59.999Z');
      expect(await verdictOf(december)).toEqual({ verdict: 'AUTHENTIC', indicators: [] });
      at('2032-01-01T00:00:00.000Z');
      expect(await verdictOf(december)).toEqual({ verdict: 'SUSPICIOUS', indicators: ['EXPIRED_CODE'] });
    });

    it('reads a two-digit year within 49 years back and 50 ahead of the scan: 50 ahead is the future, 51 ahead the past', async () => {
      at('2031-07-01T12:00:00.000Z');
      // 81 - 31 = 50: 2081, valid. 82 - 31 = 51: 1982, expired long ago.
      expect(await verdictOf(printed('YY-50', '811231'))).toEqual({ verdict: 'AUTHENTIC', indicators: [] });
      expect(await verdictOf(printed('YY-51', '821231'))).toEqual({ verdict: 'SUSPICIOUS', indicators: ['EXPIRED_CODE'] });
    });
  });
});

describe('daily quotas and the UTC midnight', () => {
  it('refuses the 101st generate of a free day until 00:00:00.000 UTC exactly, a held batch too, and GET /usage turns the day then', async () => {
    const free = await tenant('free', 'Midnight');
    const gtin = freshGtin();
    await grant(free.id, gtin);
    at('2031-08-15T23:59:59.000Z');
    const items = Array.from({ length: 100 }, (_, i) => ({ gtin, serialNumber: `M-${i}` }));
    const batch = await api('POST', '/code/generate/batch', { key: free.key, body: { items } });
    expect(batch.status, JSON.stringify(batch.body).slice(0, 500)).toBe(200);
    expect(batch.body.results.filter((result: Json) => result.code)).toHaveLength(100);

    at('2031-08-15T23:59:59.500Z');
    const refused = await api('POST', '/code/generate', { key: free.key, body: { gtin, serialNumber: 'M-100' } });
    expectError(refused, 429, 'RATE_LIMITED');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(Number(refused.headers.get('x-ratelimit-reset'))).toBe(ms('2031-08-16T00:00:00Z') / 1000);
    // A batch is refused before its body is read while the day lasts...
    at('2031-08-15T23:59:59.999Z');
    const held = await api('POST', '/code/generate/batch', { key: free.key, body: { items: [{ gtin, serialNumber: 'M-101' }] } });
    expectError(held, 429, 'RATE_LIMITED');
    const lastMoment = await api('GET', '/usage', { key: free.key });
    expect(lastMoment.body).toMatchObject({ day: '2031-08-15', resetsAt: '2031-08-16T00:00:00.000Z' });
    expect(lastMoment.body.quotas.find((quota: Json) => quota.name === 'generate')).toMatchObject({ used: 100, limit: 100 });

    // ...and not a millisecond past midnight.
    at('2031-08-16T00:00:00.000Z');
    const nextDay = await api('POST', '/code/generate/batch', {
      key: free.key,
      body: { items: [{ gtin, serialNumber: 'M-101' }] },
    });
    expect(nextDay.status, JSON.stringify(nextDay.body)).toBe(200);
    expect(nextDay.body.results[0].code).toBeDefined();
    const single = await api('POST', '/code/generate', { key: free.key, body: { gtin, serialNumber: 'M-100' } });
    expect(single.status, JSON.stringify(single.body)).toBe(201);
    const newDay = await api('GET', '/usage', { key: free.key });
    expect(newDay.body).toMatchObject({ day: '2031-08-16', resetsAt: '2031-08-17T00:00:00.000Z' });
    expect(newDay.body.quotas.find((quota: Json) => quota.name === 'generate')).toMatchObject({ used: 2, limit: 100 });
  });

  it('releases a test environment’s day refused at 23:59:59.999 at 00:00:00.000, also for a keyed request held before its body is read', async () => {
    const owner = await tenant('enterprise', 'Sandbox midnight');
    const sandbox = await api('POST', '/keys', { key: owner.key, body: { name: 'sb', scopes: ['*'], environment: 'test' } });
    expect(sandbox.status).toBe(201);
    at('2031-09-01T23:59:30.000Z');
    for (let i = 0; i < 100; i++) {
      const used = await api('GET', '/usage', { key: sandbox.body.secret });
      expect(used.status).toBe(200);
    }
    at('2031-09-01T23:59:59.999Z');
    const body = { name: 'after midnight', scopes: ['assets:read'] };
    const keyed = { 'idempotency-key': 'review-time-midnight-1' };
    expectError(await api('POST', '/keys', { key: sandbox.body.secret, body, headers: keyed }), 429, 'RATE_LIMITED');
    at('2031-09-02T00:00:00.000Z');
    const made = await api('POST', '/keys', { key: sandbox.body.secret, body, headers: keyed });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const usage = await api('GET', '/usage', { key: sandbox.body.secret });
    expect(usage.body.day).toBe('2031-09-02');
    expect(usage.body.quotas.find((quota: Json) => quota.name === 'requests')).toMatchObject({ used: 2, limit: 100 });
  });
});

describe('scans on either side of midnight, asked for in other time zones', () => {
  it('puts a scan at 23:59:59.999 and one at 00:00:00.000 UTC in their own days, whatever offset the range is written in', async () => {
    const brand = await tenant('enterprise', 'Scans');
    const gtin = freshGtin();
    await grant(brand.id, gtin);
    at('2031-10-05T12:00:00.000Z');
    const code = await api('POST', '/code/generate', { key: brand.key, body: { gtin, serialNumber: 'MIDNIGHT-SCAN' } });
    expect(code.status).toBe(201);
    at('2031-10-05T23:59:59.999Z');
    expect((await api('POST', '/code/verify', { key: brand.key, body: { url: code.body.url } })).status).toBe(200);
    at('2031-10-06T00:00:00.000Z');
    expect((await api('POST', '/code/verify', { key: brand.key, body: { url: code.body.url } })).status).toBe(200);
    at('2031-10-06T12:00:00.000Z');
    const list = (query: string) => api('GET', `/scans?gtin=${gtin}&${query}`, { key: brand.key });
    await waitFor('both scans listed', async () => ((await list('limit=10')).body.scans?.length === 2 ? true : undefined));

    // The same instant, midnight UTC, written three ways.
    for (const from of ['2031-10-06T00:00:00Z', '2031-10-06T05:30:00%2B05:30', '2031-10-05T14:00:00-10:00']) {
      const after = await list(`from=${from}`);
      expect(after.status, JSON.stringify(after.body)).toBe(200);
      expect(after.body.scans.map((scan: Json) => scan.scannedAt)).toEqual(['2031-10-06T00:00:00.000Z']);
      const before = await list(`to=${from}`);
      expect(before.body.scans.map((scan: Json) => scan.scannedAt)).toEqual(['2031-10-05T23:59:59.999Z']);
    }
    expectError(await list('from=2031-10-06T00:00:00Z&to=2031-10-06T05:30:00%2B05:30'), 400, 'VALIDATION_ERROR');
    expectError(await list('from=2031-10-06T00:00:00'), 400, 'VALIDATION_ERROR');

    const days = await waitFor('the day buckets', async () => {
      const answer = await api(
        'GET',
        '/scans/aggregates?groupBy=verdict&bucket=day&from=2031-10-01T00:00:00Z&to=2031-10-08T00:00:00Z',
        {
          key: brand.key,
        },
      );
      return answer.body.buckets?.length === 2 ? answer : undefined;
    });
    expect(days.body.buckets).toEqual([
      { start: '2031-10-05T00:00:00.000Z', counts: { AUTHENTIC: 1 } },
      { start: '2031-10-06T00:00:00.000Z', counts: { AUTHENTIC: 1 } },
    ]);
    // A range written in +05:30 is rounded to whole UTC hours, not whole local hours.
    const hours = await api(
      'GET',
      '/scans/aggregates?groupBy=verdict&bucket=hour&from=2031-10-06T05:15:00%2B05:30&to=2031-10-06T05:45:00%2B05:30',
      { key: brand.key },
    );
    expect(hours.status, JSON.stringify(hours.body)).toBe(200);
    expect(hours.body).toMatchObject({ from: '2031-10-05T23:00:00.000Z', to: '2031-10-06T01:00:00.000Z' });
    expect(hours.body.buckets).toEqual([
      { start: '2031-10-05T23:00:00.000Z', counts: { AUTHENTIC: 1 } },
      { start: '2031-10-06T00:00:00.000Z', counts: { AUTHENTIC: 1 } },
    ]);
  });
});

describe('a clock that steps backwards', () => {
  it('keeps an object’s history valid, provable and exportable, a key made “in the future” usable, and answers no 500', async () => {
    const house = await tenant('enterprise', 'Clock step');
    at('2031-11-20T12:00:00.000Z');
    const registered = await api('POST', '/auction/objects/register', {
      key: house.key,
      body: { title: 'Back-stepped bottle', category: 'bottle', ownerId: 'client-ann' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const objectId = registered.body.object.id as string;
    const event = (description: string) =>
      api('POST', '/auction/provenance/events', {
        key: house.key,
        body: { objectId, eventType: 'cataloged', actorRole: 'auction_house', description },
      });
    expect((await event('at noon')).status).toBe(201);
    const key = await api('POST', '/keys', {
      key: house.key,
      body: { name: 'made at noon', scopes: ['assets:read'], expiresIn: '1h' },
    });
    expect(key.status).toBe(201);

    // NTP steps the clock two hours back.
    at('2031-11-20T10:00:00.000Z');
    const earlier = await event('two hours before the last, by the clock');
    expect(earlier.status, JSON.stringify(earlier.body)).toBe(201);
    const started = await api('POST', '/auction/transfers/initiate', {
      key: house.key,
      body: { objectId, fromOwnerId: 'client-ann', toOwnerId: 'buyer-2', salePrice: 50, saleCurrency: 'EUR' },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const confirmed = await api('POST', `/auction/transfers/${started.body.transferId}/confirm`, {
      key: house.key,
      body: { transferCode: started.body.transferCode },
    });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    // A key created "later" than now still works (it has not expired) and lists.
    expect((await api('GET', '/codes', { key: key.body.secret })).status).toBe(200);

    const provenance = await api('GET', `/auction/objects/${objectId}/provenance`, { key: house.key });
    expect(provenance.status, JSON.stringify(provenance.body)).toBe(200);
    expect(provenance.body.chain_valid).toBe(true);
    const verified = await api('GET', `/compliance/${objectId}/verify`, { key: house.key });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    expect(verified.body.isValid).toBe(true);
    const root = await api('GET', `/compliance/${objectId}/merkle/root`, { key: house.key });
    expect(root.status, JSON.stringify(root.body)).toBe(200);
    const exported = await api('GET', `/compliance/${objectId}/export?format=json`, { key: house.key });
    expect(exported.status).toBe(200);
    expect(exported.body.events.length).toBe(root.body.treeSize);
    const publicView = await call<Json>(t.url, 'GET', `/api/v1/auction/public/verify/${registered.body.object.service_serial}`);
    expect(publicView.status, JSON.stringify(publicView.body)).toBe(200);
  });
});
