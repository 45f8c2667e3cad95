// A hostile review of the auction side (2026-12-05): a counterfeiter with a script, another tenant,
// a leaked or narrow key. What the existing hostile-* and auction tests do not cover: names that
// pass the printable-name rule yet read as another name or as nobody, an Idempotency-Key standing in
// for a transfer code once the gateway has forgotten it, event times after a clock step back, the
// old owner and narrow/other-environment keys after a handover, and numbers JSON cannot carry in
// the object's and the sale's fields.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let house: string;
let other: string;

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

/** A request whose JSON body is sent exactly as written (numbers such as 1e400 reach the server as they are). */
async function raw(key: string, method: string, path: string, body: string): Promise<ApiResponse<Json>> {
  const response = await fetch(`${t.url}/api/v1${path}`, {
    method,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : {} };
}

function expectError(response: ApiResponse<Json>, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

async function register(title: string, ownerId = 'client-jane', key = house) {
  const registered = await api('POST', '/auction/objects/register', { key, body: { title, category: 'watch', ownerId } });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  return registered.body.object as { id: string; service_serial: string };
}

const initiate = (objectId: string, fromOwnerId: string, toOwnerId: string, key = house) =>
  api('POST', '/auction/transfers/initiate', {
    key,
    body: { objectId, fromOwnerId, toOwnerId, salePrice: 18_500, saleCurrency: 'EUR' },
  });

const confirm = (transferId: string, transferCode: string, key = house, idempotencyKey?: string) =>
  api('POST', `/auction/transfers/${transferId}/confirm`, {
    key,
    body: { transferCode },
    ...(idempotencyKey ? { headers: { 'idempotency-key': idempotencyKey } } : {}),
  });

/** A name as escapes, so a failure shows which invisible character was taken. */
const shown = (text: string) =>
  [...text]
    .map((char) => (/[ -~]/.test(char) ? char : `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`))
    .join('');

const wrongOf = (code: string) => (code === '000000' ? '111111' : '000000');

async function historyOf(objectId: string) {
  const history = await api('GET', `/auction/objects/${objectId}/provenance`, { key: house });
  expect(history.status, JSON.stringify(history.body)).toBe(200);
  return history.body as { chain_valid: boolean; events: Array<{ type: string; timestamp: string }>; chain_of_custody: Json[] };
}

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '1000' });
  const operator = t.product.generatedOperatorKey as string;
  const account = async (name: string) => {
    const created = await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body as { account: { id: string }; apiKey: { secret: string } };
  };
  const created = await account('Maison Review');
  house = created.apiKey.secret;
  other = (await account('Rival Review')).apiKey.secret;
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

describe('names that read as another name or as nobody', () => {
  // docs/AUCTION.md l.11-13: ownerId "not blank, and without control or text-direction characters,
  // which would make a custody entry read as another name: 400, as for a sale's toOwnerId";
  // l.135-137: actorRole/actorName "printable and not blank, as an ownerId". The schema's own reason
  // (contracts schemas/auction.ts): "a bidi override or a line break in a name shows another name".
  // U+2028/U+2029 are line breaks; U+200B, U+2060 and U+3164 alone print nothing (a blank name), and
  // so do the format characters and variation selectors an attack found taken (2026-12-06): tag
  // characters, a variation selector, the musical and shorthand format controls beyond U+FFFF (a
  // custody entry "jane → " to a buyer who reads as nobody).
  const lineBreaks = ['client\u2028jane', 'client\u2029jane'];
  const blanks = [
    '\u200B',
    '\u2060\u2060',
    '\u3164',
    '\u{E0048}\u{E004D}',
    '\uFE0F',
    '\u{1D173}\u{1D174}',
    '\u{1BCA0}',
    '\u206A',
  ];

  it('refuses an owner id that breaks the line or prints nothing, registering or selling, and stores nothing', async () => {
    const answers: Array<[string, number]> = [];
    for (const ownerId of [...lineBreaks, ...blanks]) {
      const answer = await api('POST', '/auction/objects/register', {
        key: house,
        body: { title: 'Named lot', category: 'watch', ownerId },
      });
      answers.push([`register ownerId ${shown(ownerId)}`, answer.status]);
    }
    const object = await register('Lot for odd buyers');
    for (const toOwnerId of [...lineBreaks, ...blanks]) {
      const answer = await initiate(object.id, 'client-jane', toOwnerId);
      answers.push([`initiate toOwnerId ${shown(toOwnerId)}`, answer.status]);
      if (answer.status === 201) {
        await api('POST', `/auction/transfers/${answer.body.transferId}/cancel`, { key: house });
      }
    }
    expect(answers.filter(([, status]) => status !== 400)).toEqual([]);
    // Characters beyond U+FFFF that show are names (their first UTF-16 units start those above too).
    for (const toOwnerId of ['\u{1D11E} Society', '\u{1F600}']) {
      const answer = await initiate(object.id, 'client-jane', toOwnerId);
      expect(answer.status, `${shown(toOwnerId)} ${JSON.stringify(answer.body)}`).toBe(201);
      await api('POST', `/auction/transfers/${answer.body.transferId}/cancel`, { key: house });
    }
  });

  it('refuses an actor name or role that breaks the line or prints nothing', async () => {
    const object = await register('Lot with odd actors');
    const answers: Array<[string, number]> = [];
    for (const name of [...lineBreaks, ...blanks]) {
      for (const field of ['actorName', 'actorRole']) {
        const answer = await api('POST', '/auction/provenance/events', {
          key: house,
          body: { objectId: object.id, eventType: 'cataloged', actorRole: 'appraiser', [field]: name, description: 'note' },
        });
        answers.push([`${field} ${shown(name)}`, answer.status]);
      }
    }
    expect(answers.filter(([, status]) => status !== 400)).toEqual([]);
    expect((await historyOf(object.id)).events.map((event) => event.type)).toEqual(['registered']);
  });

  it('refuses a title that reorders, breaks or shows nothing, and a description with text-direction or control characters; keeps a description of several lines', async () => {
    // The title and description are shown to whoever scans the object's label (the public verification
    // and the resolver's page): an U+202E there reorders what the page says of the object.
    const refused: Array<[string, number]> = [];
    for (const title of ['Rolex \u202Eacilper', 'Lot\nno. 7', 'Lot\u2028no. 7', '   ', ...blanks, 'Lot\u001b[2J']) {
      const answer = await api('POST', '/auction/objects/register', { key: house, body: { title, category: 'watch' } });
      refused.push([`title ${shown(title)}`, answer.status]);
    }
    for (const description of ['Dial \u202Eacilper', 'Case\u2066 back', 'Bell\u0007']) {
      const answer = await api('POST', '/auction/objects/register', {
        key: house,
        body: { title: 'Described lot', category: 'watch', description },
      });
      refused.push([`description ${shown(description)}`, answer.status]);
    }
    expect(refused.filter(([, status]) => status !== 400)).toEqual([]);
    const kept = await api('POST', '/auction/objects/register', {
      key: house,
      body: {
        title: 'Zoë’s lot, 1962',
        category: 'watch',
        description: 'Dial: original.\nCase:\tpolished once.\r\nBox and papers.',
      },
    });
    expect(kept.status, JSON.stringify(kept.body)).toBe(201);
  });
});

describe('an Idempotency-Key once the gateway has forgotten it', () => {
  it('does not stand in for the transfer code: a wrong code with the key of the confirm that sold the object is 409, not that sale', async () => {
    const object = await register('Lot sold yesterday');
    const started = await initiate(object.id, 'client-jane', 'client-omar');
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const { transferId, transferCode } = started.body;
    const key = `confirm-${transferId}`;
    const sold = await confirm(transferId, transferCode, house, key);
    expect(sold.status, JSON.stringify(sold.body)).toBe(200);
    // docs/API.md: "Expiry: after 24 h the key is free again (a new request with it runs)".
    const moved = 24 * 3_600_000 + 60_000;
    t.clock.advance(moved);
    try {
      // A new request with a wrong code: docs/AUCTION.md l.270-271 "completed → 409 with
      // details.status: "completed""; l.277 "A refused confirm (a wrong code) keeps nothing, so the
      // key does not stand in for the code".
      const guessed = await confirm(transferId, wrongOf(transferCode), house, key);
      expectError(guessed, 409, 'CONFLICT');
      expect(guessed.body.error?.details).toMatchObject({ status: 'completed' });
      const noKey = await confirm(transferId, wrongOf(transferCode), house);
      expectError(noKey, 409, 'CONFLICT');
    } finally {
      t.clock.advance(-moved);
    }
  });
});

describe('event times after the clock steps back', () => {
  it('never dates an event of the history before the one it follows', async () => {
    const object = await register('Lot across a clock step');
    const cataloged = await api('POST', '/auction/provenance/events', {
      key: house,
      body: { objectId: object.id, eventType: 'cataloged', actorRole: 'auction_house', description: 'catalogued' },
    });
    expect(cataloged.status, JSON.stringify(cataloged.body)).toBe(201);
    const step = 2 * 3_600_000;
    t.clock.advance(-step); // NTP corrects a host whose clock ran two hours ahead
    try {
      const listed = await api('POST', '/auction/provenance/events', {
        key: house,
        body: { objectId: object.id, eventType: 'listed', actorRole: 'auction_house', description: 'lot 12' },
      });
      expect(listed.status, JSON.stringify(listed.body)).toBe(201);
      const started = await initiate(object.id, 'client-jane', 'client-omar');
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      expect((await confirm(started.body.transferId, started.body.transferCode)).status).toBe(200);
    } finally {
      t.clock.advance(step);
    }
    const history = await historyOf(object.id);
    expect(history.chain_valid).toBe(true);
    const times = history.events.map((event) => `${event.type} ${event.timestamp}`);
    const outOfOrder = history.events.filter(
      (event, index) => index > 0 && Date.parse(event.timestamp) < Date.parse(history.events[index - 1]?.timestamp as string),
    );
    // A history whose sale is dated before its cataloguing tells a buyer a different story.
    expect(outOfOrder, times.join('\n')).toEqual([]);
    const custody = history.chain_of_custody.map((entry) => Date.parse(entry.timestamp));
    expect(custody, JSON.stringify(history.chain_of_custody)).toEqual([...custody].sort((a, b) => a - b));
  });
});

describe('after the handover', () => {
  it('lets no narrow key, other environment or other tenant spend the code’s tries; the old owner cannot sell again; the sold object cannot be listed', async () => {
    const object = await register('Lot handed over');
    const started = await initiate(object.id, 'client-jane', 'client-omar');
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const { transferId, transferCode } = started.body;
    const keyOf = async (scopes: string[], environment: 'live' | 'test' = 'live') => {
      const created = await api('POST', '/keys', {
        key: house,
        body: { name: `k-${scopes.join('-')}-${environment}`, scopes, environment },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return created.body.secret as string;
    };
    const noTransfer = await keyOf(['assets:create', 'assets:read']);
    const testStar = await keyOf(['*'], 'test');
    const transferOnly = await keyOf(['assets:transfer']);
    const wrong = wrongOf(transferCode);
    for (let i = 0; i < 6; i += 1) {
      expectError(await confirm(transferId, wrong, noTransfer), 403, 'INSUFFICIENT_SCOPE');
      expectError(await confirm(transferId, wrong, testStar), 404, 'NOT_FOUND');
      expectError(await confirm(transferId, wrong, other), 404, 'NOT_FOUND');
    }
    // None of those took a try: the right code (with the one scope confirming needs) still completes.
    const done = await confirm(transferId, transferCode, transferOnly);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({ status: 'completed', objectStatus: 'sold' });
    // The old owner no longer owns it; the new one may sell it on; a sold object is not listed again.
    expectError(await initiate(object.id, 'client-jane', 'client-lee'), 409, 'CONFLICT');
    const listed = await api('POST', '/auction/provenance/events', {
      key: house,
      body: { objectId: object.id, eventType: 'listed', actorRole: 'auction_house' },
    });
    expectError(listed, 409, 'CONFLICT');
    const resale = await initiate(object.id, 'client-omar', 'client-lee');
    expect(resale.status, JSON.stringify(resale.body)).toBe(201);
    // The test key of the same account sees nothing of the live object, nor can cancel its transfer.
    expectError(await api('GET', `/auction/objects/${object.id}/provenance`, { key: testStar }), 404, 'NOT_FOUND');
    expectError(await api('POST', `/auction/transfers/${resale.body.transferId}/cancel`, { key: testStar }), 404, 'NOT_FOUND');
    const history = await historyOf(object.id);
    expect(history.chain_of_custody.map((entry) => [entry.from, entry.to])).toEqual([
      [null, 'client-jane'],
      ['client-jane', 'client-omar'],
    ]);
  });
});

describe('codes after their end', () => {
  it('takes no code after expiry or after cancellation, whatever tries remain, and frees the object', async () => {
    const object = await register('Lot whose codes end');
    const started = await initiate(object.id, 'client-jane', 'client-omar');
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const { transferId, transferCode, expiresAt } = started.body;
    const untilExpiry = Date.parse(expiresAt) - t.clock.now().getTime();
    t.clock.advance(untilExpiry - 1_000);
    let moved = untilExpiry - 1_000;
    try {
      for (let i = 0; i < 4; i += 1) expectError(await confirm(transferId, wrongOf(transferCode)), 400, 'VALIDATION_ERROR');
      t.clock.advance(2_000);
      moved += 2_000;
      expectError(await confirm(transferId, transferCode), 410, 'GONE');
      const cancelled = await api('POST', `/auction/transfers/${transferId}/cancel`, { key: house });
      expectError(cancelled, 409, 'CONFLICT');
      expect(cancelled.body.error?.details).toMatchObject({ status: 'expired' });
      const next = await initiate(object.id, 'client-jane', 'client-omar');
      expect(next.status, JSON.stringify(next.body)).toBe(201);
      const cancel = await api('POST', `/auction/transfers/${next.body.transferId}/cancel`, { key: house });
      expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
      const late = await confirm(next.body.transferId, next.body.transferCode);
      expectError(late, 409, 'CONFLICT');
      expect(late.body.error?.details).toMatchObject({ status: 'cancelled' });
      // The first transfer's code, after the clock steps back inside its lifetime: its end is recorded, it stays ended.
      t.clock.advance(-3_600_000);
      moved -= 3_600_000;
      const revived = await confirm(transferId, transferCode);
      expect(revived.status, JSON.stringify(revived.body)).not.toBe(200);
    } finally {
      t.clock.advance(-moved);
    }
    const history = await historyOf(object.id);
    expect(history.events.map((event) => event.type).filter((type) => type === 'sold' || type === 'transferred')).toEqual([]);
    expect(history.chain_of_custody).toHaveLength(1);
  });
});

describe('keys without the auction scope', () => {
  it('lets a key without the route’s scope do nothing on any auction route (403), and changes nothing', async () => {
    const object = await register('Lot behind scopes');
    const started = await initiate(object.id, 'client-jane', 'client-omar');
    const verifyOnly = (await api('POST', '/keys', { key: house, body: { name: 'verify only', scopes: ['assets:verify'] } })).body
      .secret as string;
    const readOnly = (await api('POST', '/keys', { key: house, body: { name: 'read only', scopes: ['assets:read'] } })).body
      .secret as string;
    const answers: Array<[string, number]> = [];
    const tryAll = async (key: string, label: string, skipReads: boolean) => {
      const requests: Array<[string, string, unknown]> = [
        ['POST', '/auction/objects/register', { title: 'x', category: 'watch' }],
        ['POST', '/auction/provenance/events', { objectId: object.id, eventType: 'cataloged' }],
        [
          'POST',
          '/auction/transfers/initiate',
          { objectId: object.id, fromOwnerId: 'client-jane', toOwnerId: 'z', salePrice: 1, saleCurrency: 'EUR' },
        ],
        ['POST', `/auction/transfers/${started.body.transferId}/confirm`, { transferCode: started.body.transferCode }],
        ['POST', `/auction/transfers/${started.body.transferId}/cancel`, undefined],
        ...(skipReads
          ? []
          : ([
              ['GET', `/auction/objects/${object.service_serial}/provenance`, undefined],
              ['GET', '/auction/dashboard/objects', undefined],
            ] as Array<[string, string, unknown]>)),
      ];
      for (const [method, path, body] of requests) {
        const answer = await api(method, path, { key, ...(body !== undefined ? { body } : {}) });
        answers.push([`${label} ${method} ${path}`, answer.status]);
      }
    };
    await tryAll(verifyOnly, 'assets:verify', false);
    await tryAll(readOnly, 'assets:read', true);
    expect(answers.filter(([, status]) => status !== 403)).toEqual([]);
    const history = await historyOf(object.id);
    expect(history.events.map((event) => event.type)).toEqual(['registered', 'transfer_initiated']);
    expect((await confirm(started.body.transferId, started.body.transferCode)).status).toBe(200);
  });
});

describe('numbers JSON cannot carry in the object’s and the sale’s fields', () => {
  it('refuses a sale price or an estimate of 1e400 (Infinity once parsed) with 400, storing nothing', async () => {
    const object = await register('Lot with huge numbers');
    const sale = await raw(
      house,
      'POST',
      '/auction/transfers/initiate',
      `{"objectId":"${object.id}","fromOwnerId":"client-jane","toOwnerId":"client-omar","salePrice":1e400,"saleCurrency":"EUR"}`,
    );
    expectError(sale, 400, 'VALIDATION_ERROR');
    const estimate = await raw(
      house,
      'POST',
      '/auction/objects/register',
      '{"title":"Huge","category":"watch","estimated_value":{"min":1,"max":1e400,"currency":"EUR"}}',
    );
    expectError(estimate, 400, 'VALIDATION_ERROR');
    const history = await historyOf(object.id);
    expect(history.events.map((event) => event.type)).toEqual(['registered']);
    expect(history.chain_valid).toBe(true);
  });
});
