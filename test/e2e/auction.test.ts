import { createHash } from 'node:crypto';
import { verifyOffline } from '@hallmark/client';
import { createSqlEventStore } from '@hallmark/event-store';
import { parseDigitalLink } from '@hallmark/gs1';
import { appendToAssetHistory } from '@hallmark/provenance';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { picture } from '../support/pictures.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let house: string;
let other: string;
let accountId: string;
const uploadLimit = 400_000;

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
const api = <T = Record<string, any>>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(t.url, method, `/api/v1${path}`, options);

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

/** A photo with detail in a few places (test/support/pictures.ts), as a PNG. */
const photo = (seed: number, side?: number) => picture(seed, { ...(side ? { side } : {}), format: 'png' });

async function upload(key: string, objectId: string, angle: string | undefined, bytes: Buffer, filename = 'photo.png') {
  const form = new FormData();
  if (angle !== undefined) form.append('angle', angle);
  form.append('photo', new Blob([bytes], { type: 'image/png' }), filename);
  const response = await fetch(`${t.url}/api/v1/auction/objects/${objectId}/photos`, {
    method: 'POST',
    headers: { 'x-api-key': key },
    body: form,
  });
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

async function register(body: Record<string, unknown> = {}) {
  const registered = await api('POST', '/auction/objects/register', {
    key: house,
    body: { title: 'Submariner 1680', category: 'watch', ownerId: 'client-jane', ...body },
  });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  return registered.body as { object: Json; qr_data: { gs1DigitalLink: string; serial: string } };
}

const event = (objectId: string, eventType: string, extra: Record<string, unknown> = {}) =>
  api('POST', '/auction/provenance/events', {
    key: house,
    body: { objectId, eventType, actorRole: 'auction_house', description: `${eventType} note`, ...extra },
  });

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_UPLOAD_LIMIT_BYTES: String(uploadLimit), HALLMARK_PUBLIC_RATE_LIMIT: '1000' });
  const operator = t.product.generatedOperatorKey as string;
  const account = async (name: string) =>
    (await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } })).body as {
      account: { id: string };
      apiKey: { secret: string };
    };
  const created = await account('Maison Example');
  house = created.apiKey.secret;
  accountId = created.account.id;
  other = (await account('Other house')).apiKey.secret;
});

afterAll(async () => {
  await t?.stop();
});

describe('registration', () => {
  it('registers an object: consigned, a checked serial, a signed link with a GTIN-14 and the category', async () => {
    const { object, qr_data } = await register();
    expect(object).toMatchObject({
      id: expect.stringMatching(/^obj_[0-9a-f]{20}$/),
      service_serial: expect.stringMatching(/^HM-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}$/),
      title: 'Submariner 1680',
      category: 'watch',
      status: 'consigned',
      security_tier: 'basic',
      anchor_count: 0,
      entropy_bits: 0,
    });
    expect(qr_data.serial).toBe(object.service_serial);
    const parsed = parseDigitalLink(qr_data.gs1DigitalLink);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.link).toMatchObject({ serial: object.service_serial, batch: 'watch' });
    expect(parsed.link.gtin).toMatch(/^\d{14}$/);
    const jwks = (await call(t.url, 'GET', '/.well-known/jwks.json')).body as never;
    expect(verifyOffline(qr_data.gs1DigitalLink, jwks)).toMatchObject({ valid: true, serial: object.service_serial });
  });

  it('refuses an unknown category, naming the allowed ones, and a missing title', async () => {
    const bad = await api('POST', '/auction/objects/register', { key: house, body: { title: 'Vase', category: 'vase' } });
    expectError(bad, 400, 'VALIDATION_ERROR');
    expect(bad.body.error?.message).toContain('watch, painting, bottle');
    expectError(
      await api('POST', '/auction/objects/register', { key: house, body: { category: 'watch' } }),
      400,
      'VALIDATION_ERROR',
    );
  });
});

describe('photos', () => {
  it('binds each required angle, replaces a re-upload, and computes the security figures from the photos', async () => {
    const { object } = await register({ title: 'Daytona 6263' });
    const angles = ['dial', 'movement', 'serial_engraving', 'case_back'];
    let last: Json = {};
    for (const [i, angle] of angles.entries()) {
      const bytes = await photo(i + 1);
      const bound = await upload(house, object.id, angle, bytes);
      expect(bound.status, JSON.stringify(bound.body)).toBe(201);
      expect(bound.body).toMatchObject({
        angle,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        perceptualHash: expect.stringMatching(/^[0-9a-f]{16}$/),
        replaced: false,
        photo_status: { count: i + 1, required: 4, binding_status: i === 3 ? 'valid' : 'pending' },
      });
      last = bound.body;
    }
    expect(last.object.anchor_count).toBeGreaterThan(8);
    expect(last.object.entropy_bits).toBeGreaterThanOrEqual(128);
    expect(last.object.security_tier).toBe('enhanced');

    const again = await upload(house, object.service_serial, 'dial', await photo(42));
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ replaced: true, photo_status: { count: 4, binding_status: 'valid' } });
    const history = await api('GET', `/auction/objects/${object.service_serial}/provenance`, { key: house });
    const photographed = history.body.events.filter((entry: { type: string }) => entry.type === 'photographed');
    expect(photographed).toHaveLength(5);
    expect(photographed[4].details).toMatchObject({ angle: 'dial', replaced: true });
  });

  it('refuses a wrong angle, a file that is not an image, a missing field, and a file over the limit (413)', async () => {
    const { object } = await register({ title: 'Portrait', category: 'painting' });
    const wrongAngle = await upload(house, object.id, 'dial', await photo(5));
    expectError(wrongAngle as never, 400, 'VALIDATION_ERROR');
    expect(wrongAngle.body.error.message).toContain('overall, detail_1, detail_2, signature, reverse');
    expectError(
      (await upload(house, object.id, 'overall', Buffer.from('not an image at all'), 'fake.png')) as never,
      400,
      'VALIDATION_ERROR',
    );
    expectError((await upload(house, object.id, undefined, await photo(6))) as never, 400, 'VALIDATION_ERROR');
    const noise = await sharp(Buffer.from(Array.from({ length: 500 * 500 * 3 }, (_, i) => (i * 7919) % 251)), {
      raw: { width: 500, height: 500, channels: 3 },
    })
      .png({ compressionLevel: 0 })
      .toBuffer();
    expect(noise.length).toBeGreaterThan(uploadLimit);
    expectError((await upload(house, object.id, 'overall', noise)) as never, 413, 'PAYLOAD_TOO_LARGE');
    const json = await api('POST', `/auction/objects/${object.id}/photos`, { key: house, body: { angle: 'overall' } });
    expectError(json, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError((await upload(other, object.id, 'overall', await photo(7))) as never, 404, 'NOT_FOUND');
    const history = await api('GET', `/auction/objects/${object.id}/provenance`, { key: house });
    expect(history.body.events.map((entry: { type: string }) => entry.type)).toEqual(['registered']);
  });
});

describe('provenance events and states', () => {
  it('records events with hash and position, and moves the status by listed and withdrawn', async () => {
    const { object } = await register({ title: 'Lot 12' });
    const cataloged = await event(object.id, 'cataloged', { evidence: { lot: 12 } });
    expect(cataloged.status, JSON.stringify(cataloged.body)).toBe(201);
    expect(cataloged.body).toMatchObject({
      objectId: object.id,
      type: 'cataloged',
      position: 2,
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      prevHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      status: 'consigned',
    });
    expect((await event(object.service_serial, 'listed')).body.status).toBe('listed');
    const relisted = await event(object.id, 'listed');
    expectError(relisted, 409, 'CONFLICT');
    expect(relisted.body.error?.message).toContain('listed');
    expect((await event(object.id, 'withdrawn')).body.status).toBe('consigned');
    const withdrawnAgain = await event(object.id, 'withdrawn');
    expectError(withdrawnAgain, 409, 'CONFLICT');
    expect(withdrawnAgain.body.error?.details).toMatchObject({ status: 'consigned', eventType: 'withdrawn' });
    for (const type of ['exhibited', 'condition_report', 'photographed']) {
      expect((await event(object.id, type, { evidence: { by: 'expert' } })).status).toBe(201);
    }
  });

  it('chains events sent at once on one object, one after the other, without losing any', async () => {
    const { object } = await register({ title: 'Busy lot' });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => event(object.id, 'condition_report', { evidence: { inspector: `I-${i}` } })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(201));
    expect(answers.map((answer) => answer.body.position).sort((a: number, b: number) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    const history = await api('GET', `/auction/objects/${object.id}/provenance`, { key: house });
    expect(history.body).toMatchObject({ chain_valid: true });
    expect(history.body.events).toHaveLength(9);
  });

  it('refuses unknown types, types only transfers record, and missing evidence the config requires', async () => {
    const { object } = await register({ title: 'Lot 13' });
    for (const type of ['repainted', 'sold', 'transferred', 'registered'])
      expectError(await event(object.id, type), 400, 'VALIDATION_ERROR');
    const noEvidence = await event(object.id, 'authenticated');
    expectError(noEvidence, 400, 'VALIDATION_ERROR');
    expect(noEvidence.body.error?.message).toContain('evidence');
    expect((await event(object.id, 'authenticated', { evidence: { certificate: 'CERT-1' } })).status).toBe(201);
    expectError(await event('obj_doesnotexist', 'cataloged'), 404, 'NOT_FOUND');
    const foreign = await api('POST', '/auction/provenance/events', {
      key: other,
      body: { objectId: object.id, eventType: 'cataloged' },
    });
    expectError(foreign, 404, 'NOT_FOUND');
  });

  it('gives the provenance history with events, custody and a real chain check; a tampered event shows', async () => {
    const { object } = await register({ title: 'Lot 14' });
    await event(object.id, 'cataloged', { evidence: { lot: 14 } });
    const history = await api('GET', `/auction/objects/${object.service_serial}/provenance`, { key: house });
    expect(history.status).toBe(200);
    expect(history.body).toMatchObject({
      object: { serial: object.service_serial, title: 'Lot 14' },
      chain_valid: true,
      chain_of_custody: [{ from: null, to: 'client-jane', transfer_type: 'registration' }],
    });
    expect(history.body.events[1]).toMatchObject({ type: 'cataloged', actor: { type: 'auction_house' } });
    expectError(await api('GET', `/auction/objects/${object.service_serial}/provenance`, { key: other }), 404, 'NOT_FOUND');

    await t.product.db.query(
      `UPDATE events SET data = jsonb_set(data, '{evidence}', '{"lot": 99}') WHERE stream_id = $1 AND stream_version = 2`,
      [`asset-${object.id}`],
    );
    expect((await api('GET', `/auction/objects/${object.id}/provenance`, { key: house })).body.chain_valid).toBe(false);
    const publicView = await call(t.url, 'GET', `/api/v1/auction/public/verify/${object.service_serial}`);
    expect(publicView.body).toMatchObject({ status: 'suspicious', provenance: { chain_intact: false } });
    const compliance = await api('GET', `/compliance/${object.id}/verify`, { key: house });
    expect(compliance.body).toMatchObject({ isValid: false, brokenAt: { sequence: 2, reason: 'HASH_MISMATCH' } });
  });
});

describe('public verification', () => {
  it('answers without a key, from the real chain, signature and photos, with nothing that identifies an owner', async () => {
    const { object } = await register({ title: 'Bottle of 1945', category: 'bottle', ownerId: 'jane.doe@example.com' });
    for (const [i, angle] of ['front_label', 'closure', 'back_label', 'fill_level'].entries()) {
      expect((await upload(house, object.id, angle, await photo(20 + i))).status).toBe(201);
    }
    await event(object.id, 'authenticated', { actorName: 'Jane Doe Expertise', evidence: { expert: 'Jane Doe' } });
    const response = await fetch(`${t.url}/api/v1/auction/public/verify/${object.service_serial}`);
    expect(response.status).toBe(200);
    const text = await response.text();
    const body = JSON.parse(text);
    expect(body).toEqual({
      status: 'authentic',
      confidence: 0.99,
      object: {
        title: 'Bottle of 1945',
        category: 'bottle',
        serial: object.service_serial,
        security_tier: expect.stringMatching(/^(standard|enhanced)$/),
        registered_at: expect.any(String),
      },
      cryptographic_identity: {
        signature_valid: true,
        photo_binding: 'valid',
        tag_status: 'verified',
        reference_photos: { bound: 4, required: 4 },
      },
      provenance: { event_count: 6, chain_intact: true, current_owner: 'Private Collector', latest_event: 'authenticated' },
      security: {
        spatial_relations: expect.any(Number),
        entropy_bits: expect.any(Number),
        tier_label: expect.stringMatching(/: photo-bound at every required angle$/),
      },
    });
    for (const secret of [object.id, accountId, 'jane', 'Jane', 'example.com', 'client-', 'acc_', 'obj_', 'key_', '@']) {
      expect(text).not.toContain(secret);
    }
    expectError(await call(t.url, 'GET', '/api/v1/auction/public/verify/HM-00000-00000-00000'), 404, 'NOT_FOUND');
  });

  it('reads a scanned label on the resolver as issued only: its signature under another GTIN or category is not valid', async () => {
    const { qr_data } = await register({ title: 'Clock', category: 'watch' });
    const scan = async (link: string) => {
      const { pathname, search } = new URL(link);
      const response = await fetch(`${t.url}${pathname}${search}`, { headers: { accept: 'application/json' } });
      expect(response.status).toBe(200);
      return ((await response.json()) as Json).cryptographic_identity.signature_valid as boolean;
    };
    expect(await scan(qr_data.gs1DigitalLink)).toBe(true);
    // Under a GTIN other than the one derived from its serial it is no object's label at all: a
    // code of that GTIN, verified as one (a brand's code may have such a serial), and forged.
    const otherGtin = qr_data.gs1DigitalLink.replace(/\/01\/\d{14}\//, '/01/09506000134352/');
    expect(otherGtin).not.toBe(qr_data.gs1DigitalLink);
    const { pathname, search } = new URL(otherGtin);
    const asCode = (await (
      await fetch(`${t.url}${pathname}${search}`, { headers: { accept: 'application/json' } })
    ).json()) as Json;
    expect(asCode).toMatchObject({ verdict: 'COUNTERFEIT', checks: { signature: { passed: false } } });
    expect(asCode.cryptographic_identity).toBeUndefined();
    const otherCategory = qr_data.gs1DigitalLink.replace('/10/watch', '/10/bottle');
    expect(otherCategory).not.toBe(qr_data.gs1DigitalLink);
    expect(await scan(otherCategory)).toBe(false);
  });
});

describe('long histories (docs/AUCTION.md, "Provenance events and states")', () => {
  /**
   * `cataloged` notes appended to the object's history through the product's own event store (the
   * same chained events POST /auction/provenance/events stores), 1,000 an append: thousands of
   * POSTs would take minutes, and the API now refuses notes past the 1,000th event, while a history
   * stored before that limit, or grown past it by transfers, may be longer.
   */
  async function appendNotes(objectId: string, count: number) {
    const eventStore = await createSqlEventStore(t.product.db);
    for (let done = 0; done < count; done += 1_000) {
      const inputs = Array.from({ length: Math.min(1_000, count - done) }, (_, i) => ({
        type: 'cataloged',
        data: { actorRole: 'auction_house', description: `note ${done + i}`, evidence: {} },
      }));
      await appendToAssetHistory(eventStore, { assetId: objectId, owner: { accountId, environment: 'live' } }, inputs, {
        now: t.clock.now,
      });
    }
  }

  it('verifies an object of 10,000 events in a few seconds while /health keeps answering; a change is refused at its real version', async () => {
    const { object } = await register({ title: 'Lot 30' });
    await appendNotes(object.id, 9_999);

    // /health asked one request after another while the verification runs: it answers from memory,
    // so its slowest answer is the longest the event loop was held (the product runs in this
    // process, so a held loop holds this test too, and the wall clock measures it). When folding
    // the history copied its event ids per event (quadratic), these 10,000 events held the loop for
    // 12 s (20 s and more on the development machine): the verification's 10 s timeout fired.
    let verifying = true;
    let slowestHealthMs = 0;
    const probeHealth = async () => {
      while (verifying) {
        const asked = performance.now();
        expect((await fetch(`${t.url}/health`, { signal: AbortSignal.timeout(10_000) })).status).toBe(200);
        slowestHealthMs = Math.max(slowestHealthMs, performance.now() - asked);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const started = performance.now();
    let verifyMs = 0;
    const verify = fetch(`${t.url}/api/v1/auction/public/verify/${object.service_serial}`, {
      signal: AbortSignal.timeout(10_000),
    }).finally(() => {
      verifyMs = performance.now() - started;
      verifying = false;
    });
    const [verified] = await Promise.all([verify, probeHealth()]);
    expect(verified.status).toBe(200);
    expect(await verified.json()).toMatchObject({
      provenance: { event_count: 10_000, chain_intact: true, latest_event: 'cataloged' },
    });
    // 0.8 s and a slowest /health under 0.1 s on the development machine (2026-12-02).
    expect(verifyMs).toBeLessThan(5_000);
    expect(slowestHealthMs).toBeLessThan(1_000);

    // The whole history is read (in pages), so a change is appended at its real version.
    const refused = await event(object.id, 'exhibited');
    expectError(refused, 409, 'CONFLICT');
    expect(refused.body.error?.details).toMatchObject({ limit: 1_000, eventCount: 10_000 });
    // Past 1,100 events no transfer starts either (starting and locking transfers could grow it without end).
    const transfer = await api('POST', '/auction/transfers/initiate', {
      key: house,
      body: { objectId: object.id, fromOwnerId: 'client-jane', toOwnerId: 'buyer-30', salePrice: 1000, saleCurrency: 'EUR' },
    });
    expectError(transfer, 409, 'CONFLICT');
    expect(transfer.body.error?.details).toMatchObject({ limit: 1_100, eventCount: 10_000 });
  });

  it('takes provenance events up to the 1,000th event of the history, then answers 409 CONFLICT naming the limit', async () => {
    const { object } = await register({ title: 'Lot 31' });
    await appendNotes(object.id, 998);
    const last = await event(object.id, 'condition_report', { evidence: { report: 'r-31' } });
    expect(last.status, JSON.stringify(last.body)).toBe(201);
    expect(last.body.position).toBe(1_000);
    const refused = await event(object.id, 'exhibited');
    expectError(refused, 409, 'CONFLICT');
    expect(refused.body.error?.details).toEqual({ limit: 1_000, eventCount: 1_000 });
    expect(refused.body.error?.message).toContain('no more provenance events or photos');
    expect((await upload(house, object.id, 'dial', await photo(31))).status).toBe(409);
    // A full history is still sold: the transfer appends at event 1,001.
    const transfer = await api('POST', '/auction/transfers/initiate', {
      key: house,
      body: { objectId: object.id, fromOwnerId: 'client-jane', toOwnerId: 'buyer-31', salePrice: 1000, saleCurrency: 'EUR' },
    });
    expect(transfer.status, JSON.stringify(transfer.body)).toBe(201);
  });
});

describe('transfers', () => {
  it('refuses a transfer from someone who is not the owner, and a second open one', async () => {
    const { object } = await register({ title: 'Lot 20' });
    const body = { objectId: object.id, fromOwnerId: 'someone-else', toOwnerId: 'buyer-1', salePrice: 1000, saleCurrency: 'EUR' };
    expectError(await api('POST', '/auction/transfers/initiate', { key: house, body }), 409, 'CONFLICT');
    const first = await api('POST', '/auction/transfers/initiate', { key: house, body: { ...body, fromOwnerId: 'client-jane' } });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({
      transferId: expect.stringMatching(/^trf_/),
      transferCode: expect.stringMatching(/^\d{6}$/),
      status: 'pending',
    });
    const hours = (Date.parse(first.body.expiresAt) - t.clock.now().getTime()) / 3_600_000;
    expect(hours).toBeGreaterThan(71.9);
    expect(hours).toBeLessThanOrEqual(72);
    expectError(
      await api('POST', '/auction/transfers/initiate', { key: house, body: { ...body, fromOwnerId: 'client-jane' } }),
      409,
      'CONFLICT',
    );
    expectError(
      await api('POST', `/auction/transfers/${first.body.transferId}/confirm`, {
        key: other,
        body: { transferCode: first.body.transferCode },
      }),
      404,
      'NOT_FOUND',
    );
  });

  it('opens one transfer of two started at once', async () => {
    const { object } = await register({ title: 'Lot 24' });
    const body = { objectId: object.id, fromOwnerId: 'client-jane', toOwnerId: 'buyer-6', salePrice: 5, saleCurrency: 'EUR' };
    const answers = await Promise.all([0, 1].map(() => api('POST', '/auction/transfers/initiate', { key: house, body })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
  });

  it('counts wrong codes, locks after five, and then refuses even the right code', async () => {
    const { object } = await register({ title: 'Lot 21' });
    // Three capitals that are no currency are refused, and recorded nowhere (an audit, 2026-12-07).
    const noCurrency = await api('POST', '/auction/transfers/initiate', {
      key: house,
      body: { objectId: object.id, fromOwnerId: 'client-jane', toOwnerId: 'buyer-2', salePrice: 50, saleCurrency: 'ZZZ' },
    });
    expectError(noCurrency, 400, 'VALIDATION_ERROR');
    expect(noCurrency.body.error?.details).toMatchObject({ fields: [{ field: 'saleCurrency' }] });
    const started = await api('POST', '/auction/transfers/initiate', {
      key: house,
      body: { objectId: object.id, fromOwnerId: 'client-jane', toOwnerId: 'buyer-2', salePrice: 50, saleCurrency: 'USD' },
    });
    const { transferId, transferCode } = started.body;
    const wrong = transferCode === '000000' ? '111111' : '000000';
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      const answer = await api('POST', `/auction/transfers/${transferId}/confirm`, { key: house, body: { transferCode: wrong } });
      expectError(answer, 400, 'VALIDATION_ERROR');
      expect(answer.body.error?.details).toMatchObject({ attemptsRemaining: 5 - attempt });
    }
    const locked = await api('POST', `/auction/transfers/${transferId}/confirm`, { key: house, body: { transferCode } });
    expectError(locked, 409, 'CONFLICT');
    expect(locked.body.error?.details).toMatchObject({ status: 'locked' });
    expectError(
      await api('POST', `/auction/transfers/${transferId}/confirm`, { key: house, body: { transferCode: '12ab56' } }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('answers a confirm retried with its Idempotency-Key (its first answer lost) with that answer, not 409', async () => {
    const { object } = await register({ title: 'Lot 25' });
    const started = await api('POST', '/auction/transfers/initiate', {
      key: house,
      body: { objectId: object.id, fromOwnerId: 'client-jane', toOwnerId: 'buyer-7', salePrice: 900, saleCurrency: 'EUR' },
    });
    const { transferId, transferCode } = started.body;
    const wrong = transferCode === '000000' ? '111111' : '000000';
    const confirm = (code: string, idempotencyKey?: string) =>
      api('POST', `/auction/transfers/${transferId}/confirm`, {
        key: house,
        body: { transferCode: code },
        ...(idempotencyKey ? { headers: { 'idempotency-key': idempotencyKey } } : {}),
      });
    // A wrong code's 400 is not kept: the same key with the right code is another request (422), a new key confirms.
    expectError(await confirm(wrong, `wrong-${transferId}`), 400, 'VALIDATION_ERROR');
    const first = await confirm(transferCode, `buyer-7-${transferId}`);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ transferId, status: 'completed', objectId: object.id });
    const retried = await confirm(transferCode, `buyer-7-${transferId}`);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.body).toEqual(first.body);
    // The key does not stand in for the code, and without it a second confirm is the sale's 409.
    expectError(await confirm(wrong, `buyer-7-${transferId}`), 422, 'IDEMPOTENCY_KEY_REUSED');
    const again = await confirm(transferCode);
    expectError(again, 409, 'CONFLICT');
    expect(again.body.error?.details).toMatchObject({ status: 'completed' });
    const history = await api('GET', `/auction/objects/${object.id}/provenance`, { key: house });
    expect(history.body.events.filter((entry: { type: string }) => entry.type === 'transferred')).toHaveLength(1);
  });

  it('lets exactly one of two concurrent confirms complete the sale, then answers 409', async () => {
    const { object } = await register({ title: 'Lot 22' });
    await event(object.id, 'listed');
    const started = await api('POST', '/auction/transfers/initiate', {
      key: house,
      body: {
        objectId: object.service_serial,
        fromOwnerId: 'client-jane',
        toOwnerId: 'buyer-3',
        salePrice: 125000,
        saleCurrency: 'CHF',
      },
    });
    const { transferId, transferCode } = started.body;
    const confirm = () => api('POST', `/auction/transfers/${transferId}/confirm`, { key: house, body: { transferCode } });
    const answers = await Promise.all([confirm(), confirm()]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const done = answers.find((answer) => answer.status === 200);
    expect(done?.body).toMatchObject({ transferId, status: 'completed', objectStatus: 'sold' });
    expectError(await confirm(), 409, 'CONFLICT');

    const history = await api('GET', `/auction/objects/${object.id}/provenance`, { key: house });
    expect(history.body.chain_valid).toBe(true);
    expect(history.body.events.map((entry: { type: string }) => entry.type)).toEqual([
      'registered',
      'listed',
      'transfer_initiated',
      'sold',
      'transferred',
    ]);
    expect(history.body.chain_of_custody).toMatchObject([
      { from: null, to: 'client-jane', transfer_type: 'registration' },
      { from: 'client-jane', to: 'buyer-3', transfer_type: 'sale' },
    ]);
    const sold = await api('GET', '/auction/dashboard/objects?status=sold', { key: house });
    expect(sold.body.objects.map((entry: { serial: string }) => entry.serial)).toContain(object.service_serial);
    // The new owner can sell on; the old one no longer can.
    const resale = { objectId: object.id, toOwnerId: 'buyer-4', salePrice: 1, saleCurrency: 'CHF' };
    expectError(
      await api('POST', '/auction/transfers/initiate', { key: house, body: { ...resale, fromOwnerId: 'client-jane' } }),
      409,
      'CONFLICT',
    );
    expect(
      (await api('POST', '/auction/transfers/initiate', { key: house, body: { ...resale, fromOwnerId: 'buyer-3' } })).status,
    ).toBe(201);
  });

  it('answers 410 once the code has expired', async () => {
    const { object } = await register({ title: 'Lot 23' });
    const started = await api('POST', '/auction/transfers/initiate', {
      key: house,
      body: { objectId: object.id, fromOwnerId: 'client-jane', toOwnerId: 'buyer-5', salePrice: 10, saleCurrency: 'EUR' },
    });
    t.clock.advance(72 * 3_600_000 + 1_000);
    try {
      const late = await api('POST', `/auction/transfers/${started.body.transferId}/confirm`, {
        key: house,
        body: { transferCode: started.body.transferCode },
      });
      expectError(late, 410, 'GONE');
    } finally {
      t.clock.advance(-(72 * 3_600_000 + 1_000));
    }
  });
});

describe('dashboard and compliance', () => {
  it('lists objects with photo status, filters by every status, and pages with a cursor', async () => {
    const fresh = await register({ title: 'Dashboard A' });
    const listed = await register({ title: 'Dashboard B' });
    await event(listed.object.id, 'listed');
    for (const status of ['consigned', 'listed', 'sold']) {
      const page = await api('GET', `/auction/dashboard/objects?status=${status}&limit=100`, { key: house });
      expect(page.status).toBe(200);
      expect(page.body.objects.every((entry: { status: string }) => entry.status === status)).toBe(true);
    }
    const consigned = await api('GET', '/auction/dashboard/objects?status=consigned&limit=100', { key: house });
    expect(consigned.body.objects).toContainEqual({
      serial: fresh.object.service_serial,
      title: 'Dashboard A',
      status: 'consigned',
      photo_status: { count: 0, required: 4, binding_status: 'pending' },
    });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: ApiResponse<Json> = await api('GET', `/auction/dashboard/objects?limit=3${cursor ? `&cursor=${cursor}` : ''}`, {
        key: house,
      });
      expect(page.body.objects.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.objects.map((entry: { serial: string }) => entry.serial));
      cursor = page.body.pagination.nextCursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen[0]).toBe(listed.object.service_serial);
    expect((await api('GET', '/auction/dashboard/objects', { key: other })).body.objects).toEqual([]);
    expectError(await api('GET', '/auction/dashboard/objects?status=lost', { key: house }), 400, 'VALIDATION_ERROR');
    expectError(await api('GET', '/auction/dashboard/objects?cursor=nonsense', { key: house }), 400, 'VALIDATION_ERROR');
  });

  it('serves the compliance endpoints for an object by id and by serial', async () => {
    const { object } = await register({ title: 'Audited lot' });
    await event(object.id, 'cataloged', { evidence: { lot: 1 } });
    const root = await waitFor('the object in the Merkle log', async () => {
      const answer = await api('GET', `/compliance/${object.service_serial}/merkle/root`, { key: house });
      return answer.status === 200 && answer.body.treeSize === 2 ? answer : undefined;
    });
    expect(root.body.assetId).toBe(object.id);
    expect((await api('GET', `/compliance/${object.id}/verify`, { key: house })).body).toMatchObject({
      isValid: true,
      eventCount: 2,
    });
  });
});

describe('public verification limits', () => {
  it('limits each client address per second, with Retry-After, and never asks for a key', async () => {
    const limited = await startTestProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '3' });
    try {
      // Early in a second, so that all six requests fall into it.
      const second = Math.ceil(Date.now() / 1000) * 1000 + 3_600_000;
      limited.clock.freeze(new Date(second + 200));
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => fetch(`${limited.url}/api/v1/auction/public/verify/HM-00000-00000-00000`)),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses).toEqual([404, 404, 404, 429, 429, 429]);
      const refused = answers.find((answer) => answer.status === 429);
      expect(refused?.headers.get('retry-after')).toBe('1');
      expect(((await (refused as Response).json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
      limited.clock.freeze(new Date(second + 1_200));
      expect((await fetch(`${limited.url}/api/v1/auction/public/verify/HM-00000-00000-00000`)).status).toBe(404);
    } finally {
      await limited.stop();
    }
  });
});
