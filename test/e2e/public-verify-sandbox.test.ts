// What anyone sees of an auction object without a key, over HTTP (docs/AUCTION.md, "Public
// verification"; docs/RESOLVER.md): an object a test key registered is sandbox data and says so,
// in the JSON and on the resolver page, never "authentic"; a live object still is; and a transfer's
// bookkeeping (started, locked, expired) never shows as the latest event.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const testNotice = 'This is a test code: it is not a real product.';
const day = 24 * 3_600_000;

let t: TestProduct;
let liveKey: string;
let sandboxKey: string;

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
const api = <T = Record<string, any>>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(t.url, method, `/api/v1${path}`, options);

async function register(key: string, title: string, ownerId: string) {
  const registered = await api('POST', '/auction/objects/register', { key, body: { title, category: 'watch', ownerId } });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  return registered.body as { object: Json; qr_data: { gs1DigitalLink: string; serial: string } };
}

/** The public verification, as anyone asks for it: no key. */
async function publicView(serial: string): Promise<{ body: Json; text: string }> {
  const response = await fetch(`${t.url}/api/v1/auction/public/verify/${serial}`);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return { body: JSON.parse(text) as Json, text };
}

/** The resolver page a phone opens from the printed link (its redirect followed). */
async function page(link: string): Promise<string> {
  const { pathname, search } = new URL(link);
  const response = await fetch(`${t.url}${pathname}${search}`, { headers: { accept: 'text/html' } });
  const html = await response.text();
  expect(response.status, html).toBe(200);
  return html;
}

/** The resolver's JSON answer for the printed link. */
async function resolverJson(link: string): Promise<Json> {
  const { pathname, search } = new URL(link);
  const response = await fetch(`${t.url}${pathname}${search}`, { headers: { accept: 'application/json' } });
  expect(response.status).toBe(200);
  return (await response.json()) as Json;
}

/** The page's one headline. */
const headline = (html: string) => /<h1>([^<]*)<\/h1>/.exec(html)?.[1];

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '1000' });
  const created = await api('POST', '/accounts', {
    key: t.product.generatedOperatorKey as string,
    body: { name: 'Maison Sandbox Verify', tier: 'enterprise' },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  liveKey = created.body.apiKey.secret as string;
  const sandbox = await api('POST', '/keys', {
    key: liveKey,
    body: { name: 'sandbox', scopes: ['assets:create', 'assets:read'], environment: 'test' },
  });
  expect(sandbox.status, JSON.stringify(sandbox.body)).toBe(201);
  sandboxKey = sandbox.body.secret as string;
  expect(sandboxKey).toMatch(/^svc_test_/);
});

afterAll(async () => {
  await t?.stop();
});

describe('a test key’s object, verified publicly', () => {
  it('says test, never authentic, in the public JSON, the resolver’s JSON and on the page, and its code expires after 24 hours', async () => {
    const { qr_data } = await register(sandboxKey, 'Patek Philippe 2499 (sandbox)', 'sandbox-collector-7');

    const { body, text } = await publicView(qr_data.serial);
    expect(body).toMatchObject({
      status: 'test',
      environment: 'test',
      confidence: 0,
      object: { title: 'Patek Philippe 2499 (sandbox)', serial: qr_data.serial },
      cryptographic_identity: { signature_valid: true, tag_status: 'verified' },
      provenance: { event_count: 1, chain_intact: true, current_owner: 'Private Collector', latest_event: 'registered' },
    });
    expect(text).not.toMatch(/authentic/i);
    expect(text).not.toContain('sandbox-collector');

    const scanned = await resolverJson(qr_data.gs1DigitalLink);
    expect(scanned).toMatchObject({ status: 'test', environment: 'test', confidence: 0 });
    expect(JSON.stringify(scanned)).not.toMatch(/authentic/i);

    const html = await page(qr_data.gs1DigitalLink);
    expect(headline(html)).toBe(testNotice);
    expect(html).toContain('Patek Philippe 2499 (sandbox)');
    expect(html).not.toContain('Authentic product');
    expect(html).not.toContain('verdict authentic');
    expect(html).toContain('<title>Patek Philippe 2499 (sandbox): This is a test code');

    // Test-key codes expire 24 hours after they are made; the object's code with them. Still test.
    t.clock.advance(day + 60_000);
    try {
      const expired = await publicView(qr_data.serial);
      expect(expired.body).toMatchObject({
        status: 'test',
        environment: 'test',
        confidence: 0,
        cryptographic_identity: { signature_valid: true, tag_status: 'expired' },
      });
      expect(expired.text).not.toMatch(/authentic/i);
      const expiredPage = await page(qr_data.gs1DigitalLink);
      expect(headline(expiredPage)).toBe(testNotice);
      expect(expiredPage).toContain('expired 24 hours after registration');
      expect(expiredPage).not.toContain('Authentic product');
    } finally {
      t.clock.advance(-(day + 60_000));
    }
  });

  it('still answers a live object authentic, with no test notice and no environment', async () => {
    const { qr_data } = await register(liveKey, 'Patek Philippe 2499 (live)', 'live-collector-7');
    const { body } = await publicView(qr_data.serial);
    expect(body).toMatchObject({ status: 'authentic', confidence: 0.9, cryptographic_identity: { tag_status: 'verified' } });
    expect(body).not.toHaveProperty('environment');
    const html = await page(qr_data.gs1DigitalLink);
    expect(headline(html)).toBe('Authentic product');
    expect(html).not.toContain(testNotice);
  });
});

describe('a repeated public verification', () => {
  it('answers a new event at once, however often the unchanged object was verified before', async () => {
    const { object, qr_data } = await register(liveKey, 'Breguet 1160 (repeat verify)', 'collector-repeat-1');
    for (let i = 0; i < 3; i++) {
      expect((await publicView(qr_data.serial)).body.provenance).toMatchObject({ event_count: 1, latest_event: 'registered' });
    }
    const recorded = await api('POST', '/auction/provenance/events', {
      key: liveKey,
      body: { objectId: object.id, eventType: 'exhibited', actorRole: 'auction_house' },
    });
    expect(recorded.status, JSON.stringify(recorded.body)).toBe(201);
    expect((await publicView(qr_data.serial)).body.provenance).toMatchObject({ event_count: 2, latest_event: 'exhibited' });
    expect(await page(qr_data.gs1DigitalLink)).toContain('<dd>exhibited</dd>');
  });
});

describe('a transfer’s bookkeeping, verified publicly', () => {
  it('never shows as the latest event: not while a sale is pending, not after it locked or expired; a completed sale does', async () => {
    const { object, qr_data } = await register(liveKey, 'Vacheron 222 (transfer bookkeeping)', 'seller-bookkeeping-1');
    expect(
      (
        await api('POST', '/auction/provenance/events', {
          key: liveKey,
          body: { objectId: object.id, eventType: 'listed', actorRole: 'auction_house' },
        })
      ).status,
    ).toBe(201);
    const before = (await publicView(qr_data.serial)).body;
    expect(before).toMatchObject({ status: 'authentic', provenance: { event_count: 2, latest_event: 'listed' } });

    const initiate = async () => {
      const started = await api('POST', '/auction/transfers/initiate', {
        key: liveKey,
        body: {
          objectId: object.id,
          fromOwnerId: 'seller-bookkeeping-1',
          toOwnerId: 'buyer-bookkeeping-1',
          salePrice: 120_000,
          saleCurrency: 'CHF',
        },
      });
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      return started.body as { transferId: string; transferCode: string };
    };
    const confirm = (transferId: string, transferCode: string) =>
      api('POST', `/auction/transfers/${transferId}/confirm`, { key: liveKey, body: { transferCode } });
    /** The public answer shows the object as it was before the transfer, and no trace of it. */
    const expectNoBookkeeping = async () => {
      const { body, text } = await publicView(qr_data.serial);
      expect(text).not.toContain('transfer_');
      expect(body.provenance).toEqual(before.provenance);
      expect(body.status).toBe('authentic');
      const html = await page(qr_data.gs1DigitalLink);
      expect(html).not.toMatch(/transfer (initiated|locked|expired)/);
      expect(html).toContain('<dd>listed</dd>');
    };

    // Pending: transfer_initiated is the stream's newest event.
    const pending = await initiate();
    await expectNoBookkeeping();

    // Five wrong codes lock it: transfer_locked is the newest event.
    const wrong = String((Number(pending.transferCode) + 1) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < 5; i++) expect((await confirm(pending.transferId, wrong)).status).not.toBe(200);
    expect((await confirm(pending.transferId, pending.transferCode)).body.error?.details).toMatchObject({ status: 'locked' });
    await expectNoBookkeeping();

    // A new transfer records the locked one's transfer_expired first, then its own transfer_initiated.
    const next = await initiate();
    await expectNoBookkeeping();

    // The sale completes: sold and transferred are what a buyer sees.
    const completed = await confirm(next.transferId, next.transferCode);
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    const after = await publicView(qr_data.serial);
    expect(after.text).not.toContain('transfer_');
    expect(after.body).toMatchObject({
      status: 'authentic',
      provenance: { event_count: 4, chain_intact: true, latest_event: 'transferred', current_owner: 'Private Collector' },
    });
    expect(after.text).not.toContain('buyer-bookkeeping');
  });
});
