import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateEd25519KeyPair } from '@hallmark/crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { picture } from '../support/pictures.ts';
import { publicKeyRegistration } from '../support/public-keys.ts';
import { waitFor } from '../support/wait.ts';

// A cross-tenant sweep (a review of tenant isolation, 2026-12-04): tenant A (a brand) makes one of
// every resource; tenant B (another account's `*` key) and A's own test key then name A's ids on
// every route of the OpenAPI document that takes one, reading and writing. Each answer must be the
// one a truly unknown id of the same shape gets (404, same code and message), and A's data must not
// move. What it found: a GTIN's new owner inherited the previous owner's scan counters of a serial
// used again (firstSeen, totalScans and the risk rules' windows); scans are now counted per signer.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let operator: string;
const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

const gtinA = '09506000134352';
const gtinB = '09506001234563';

interface Tenant {
  id: string;
  star: string;
  test: string;
}

let a: Tenant;
let b: Tenant;
const ids: Json = {};

async function tenant(name: string, prefix: string): Promise<Tenant> {
  const created = await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const star = created.body.apiKey.secret as string;
  const id = created.body.account.id as string;
  const grant = await api('POST', `/accounts/${id}/gtins`, { key: operator, body: { prefix } });
  expect(grant.status, JSON.stringify(grant.body)).toBe(201);
  const testKey = await api('POST', '/keys', { key: star, body: { name: 'sandbox', scopes: ['*'], environment: 'test' } });
  expect(testKey.status, JSON.stringify(testKey.body)).toBe(201);
  return { id, star, test: testKey.body.secret as string };
}

/**
 * Test keys may make 100 requests a day per account: what runs with one runs on a day of its own
 * (the product's clock moved ahead a whole number of days, and back after).
 */
let daysAhead = 0;
async function onADayOfItsOwn<T>(work: () => Promise<T>): Promise<T> {
  daysAhead += 1;
  const shift = daysAhead * 86_400_000;
  t.clock.advance(shift);
  try {
    return await work();
  } finally {
    t.clock.advance(-shift);
  }
}

async function freshTestKey(owner: Tenant): Promise<string> {
  const created = await api('POST', '/keys', { key: owner.star, body: { name: 'sandbox', scopes: ['*'], environment: 'test' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.secret as string;
}

/** Another id of the same shape: the last letter or digit changed within its class. */
function unknownLike(id: string): string {
  const chars = [...id];
  for (let i = chars.length - 1; i >= 0; i -= 1) {
    const c = chars[i] as string;
    if (/[0-9]/.test(c)) {
      chars[i] = c === '7' ? '3' : '7';
      return chars.join('');
    }
    if (/[a-f]/.test(c)) {
      chars[i] = c === 'c' ? 'd' : 'c';
      return chars.join('');
    }
    if (/[a-z]/.test(c)) {
      chars[i] = c === 'k' ? 'm' : 'k';
      return chars.join('');
    }
    if (/[A-Z]/.test(c)) {
      chars[i] = c === 'K' ? 'M' : 'K';
      return chars.join('');
    }
  }
  return `${id}x`;
}

const shape = (response: ApiResponse<Json>) => ({
  status: response.status,
  code: response.body.error?.code,
  message: response.body.error?.message,
  details: response.body.error?.details,
});

async function upload(key: string, objectId: string, angle: string, bytes: Buffer) {
  const form = new FormData();
  form.append('angle', angle);
  form.append('photo', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), 'photo.png');
  const response = await fetch(`${t.url}/api/v1/auction/objects/${objectId}/photos`, {
    method: 'POST',
    headers: { 'x-api-key': key },
    body: form,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : {}) as Json };
}

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_WEBHOOKS_ALLOW_PRIVATE: 'true', HALLMARK_SELF_SERVICE_TEST_CLAIMS: 'true' });
  operator = t.product.generatedOperatorKey as string;
  a = await tenant('Maison A', '9506000');
  b = await tenant('Tenant B', '9506001');
  ids.accountA = a.id;

  const ok = (response: ApiResponse<Json>, status = 201) => {
    expect(response.status, JSON.stringify(response.body)).toBe(status);
    return response.body;
  };
  // Codes, scans, reports, blocks, links of A.
  const code = ok(await api('POST', '/code/generate', { key: a.star, body: { gtin: gtinA, serialNumber: 'A-1' } }));
  ids.assetId = code.assetId;
  ids.url = code.url;
  ok(await api('POST', '/code/generate', { key: a.star, body: { gtin: gtinA, serialNumber: 'A-2' } }));
  ok(await api('POST', '/code/verify', { key: a.star, body: { url: code.url } }), 200);
  const report = ok(await api('POST', '/code/report', { key: b.star, body: { url: code.url, reason: 'looks odd' } }));
  ids.reportId = report.reportId;
  const block = ok(
    await api('POST', '/blocklist', { key: a.star, body: { gtin: gtinA, serial: 'A-9', kind: 'withdrawn', reason: 'recall' } }),
  );
  ids.blockId = block.blockId;
  const link = ok(
    await api('POST', '/links', {
      key: a.star,
      body: { gtin: gtinA, linkType: 'gs1:pip', href: 'https://a.example/p', title: 'Product A', type: 'text/html' },
    }),
  );
  ids.linkId = link.id;
  // Schema, keys, GTIN claim.
  const schema = ok(
    await api('POST', '/schemas', {
      key: a.star,
      body: { name: 'A secret schema', vertical: 'luxury', fields: [{ name: 'secretField', type: 'string', required: true }] },
    }),
  );
  ids.schemaId = schema.id;
  const pair = generateEd25519KeyPair();
  const registered = ok(await api('POST', '/keys', { key: a.star, body: publicKeyRegistration(pair, { accountId: a.id }) }));
  ids.publicKeyId = registered.id;
  const narrow = ok(await api('POST', '/keys', { key: a.star, body: { name: 'line', scopes: ['assets:read'] } }));
  ids.apiKeyId = narrow.id;
  const signing = ok(await api('GET', '/keys?type=signing', { key: a.star }), 200);
  ids.signingKeyId = signing.keys[0]?.id;
  const claims = ok(await api('GET', '/gtins', { key: a.star }), 200);
  ids.claimId = claims.claims[0].id;
  // A webhook endpoint and a message.
  const endpoint = ok(
    await api('POST', '/webhooks/endpoints', {
      key: a.star,
      body: { url: 'http://127.0.0.1:9/hook', eventTypes: ['test', 'scan.suspicious'], description: 'A SOC' },
    }),
  );
  ids.endpointId = endpoint.id;
  const message = ok(await api('POST', `/webhooks/endpoints/${endpoint.id}/test`, { key: a.star }), 202);
  ids.messageId = message.id;
  // An auction object, a photo, an event, a transfer.
  const object = ok(
    await api('POST', '/auction/objects/register', {
      key: a.star,
      body: { title: 'A Submariner', category: 'watch', ownerId: 'client-jane' },
    }),
  );
  ids.objectId = object.object.id;
  ids.serial = object.object.service_serial;
  ok(await upload(a.star, ids.objectId, 'dial', await picture(1, { format: 'png' })));
  const event = ok(
    await api('POST', '/auction/provenance/events', {
      key: a.star,
      body: { objectId: ids.objectId, eventType: 'cataloged', actorRole: 'auction_house', description: 'note', evidence: {} },
    }),
  );
  ids.eventId = event.eventId;
  const transfer = ok(
    await api('POST', '/auction/transfers/initiate', {
      key: a.star,
      body: {
        objectId: ids.objectId,
        fromOwnerId: 'client-jane',
        toOwnerId: 'client-john',
        salePrice: 1000,
        saleCurrency: 'EUR',
      },
    }),
  );
  ids.transferId = transfer.transferId;
  ids.transferCode = transfer.transferCode;
  // B's own of each, for routes that take two ids.
  const endpointB = ok(
    await api('POST', '/webhooks/endpoints', { key: b.star, body: { url: 'http://127.0.0.1:9/b', eventTypes: ['test'] } }),
  );
  ids.endpointB = endpointB.id;
  const codeB = ok(await api('POST', '/code/generate', { key: b.star, body: { gtin: gtinB, serialNumber: 'B-1' } }));
  ids.assetB = codeB.assetId;
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

interface Probe {
  name: string;
  method: string;
  /** The path with A's id, and with an unknown id of the same shape. */
  path: (id: (name: string) => string) => string;
  body?: (id: (name: string) => string) => unknown;
}

/** Every route that names a resource by id, with A's id in the path, query or body. */
const probes: Probe[] = [
  { name: 'GET account gtins', method: 'GET', path: (id) => `/accounts/${id('accountA')}/gtins` },
  {
    name: 'grant account gtins',
    method: 'POST',
    path: (id) => `/accounts/${id('accountA')}/gtins`,
    body: () => ({ gtin: '05901234123457' }),
  },
  { name: 'GET code', method: 'GET', path: (id) => `/codes/${id('assetId')}` },
  { name: 'confirm report', method: 'POST', path: (id) => `/code/reports/${id('reportId')}/confirm`, body: () => ({}) },
  { name: 'dismiss report', method: 'POST', path: (id) => `/code/reports/${id('reportId')}/dismiss`, body: () => ({}) },
  { name: 'lift report', method: 'POST', path: (id) => `/code/reports/${id('reportId')}/lift`, body: () => ({}) },
  { name: 'GET schema', method: 'GET', path: (id) => `/schemas/${id('schemaId')}` },
  { name: 'GET schema v1', method: 'GET', path: (id) => `/schemas/${id('schemaId')}?version=1` },
  { name: 'validate schema', method: 'POST', path: (id) => `/schemas/${id('schemaId')}/validate`, body: () => ({ x: 1 }) },
  { name: 'PATCH schema', method: 'PATCH', path: (id) => `/schemas/${id('schemaId')}`, body: () => ({ name: 'owned by B' }) },
  { name: 'DELETE schema', method: 'DELETE', path: (id) => `/schemas/${id('schemaId')}` },
  {
    name: 'copy schema',
    method: 'POST',
    path: () => '/schemas',
    body: (id) => ({ copyFrom: id('schemaId'), name: 'copied' }),
  },
  {
    name: 'generate with schema',
    method: 'POST',
    path: () => '/code/generate',
    body: (id) => ({
      gtin: gtinB,
      serialNumber: `S-${Math.random().toString(36).slice(2, 8)}`,
      schemaId: id('schemaId'),
      metadata: {},
    }),
  },
  { name: 'compliance verify', method: 'GET', path: (id) => `/compliance/${id('assetId')}/verify` },
  { name: 'compliance root', method: 'GET', path: (id) => `/compliance/${id('assetId')}/merkle/root` },
  {
    name: 'compliance proof',
    method: 'GET',
    path: (id) => `/compliance/${id('objectId')}/merkle/proof?eventId=${id('eventId')}`,
  },
  {
    name: 'compliance proof of A event under B asset',
    method: 'GET',
    path: (id) => `/compliance/${ids.assetB}/merkle/proof?eventId=${id('eventId')}`,
  },
  { name: 'compliance consistency', method: 'GET', path: (id) => `/compliance/${id('objectId')}/merkle/consistency?from=1&to=2` },
  { name: 'compliance export', method: 'GET', path: (id) => `/compliance/${id('assetId')}/export` },
  { name: 'compliance export csv', method: 'GET', path: (id) => `/compliance/${id('objectId')}/export?format=csv` },
  { name: 'compliance verify by serial', method: 'GET', path: (id) => `/compliance/${id('serial')}/verify` },
  { name: 'photo upload', method: 'PHOTO', path: (id) => id('objectId') },
  {
    name: 'provenance event',
    method: 'POST',
    path: () => '/auction/provenance/events',
    body: (id) => ({ objectId: id('objectId'), eventType: 'listed', actorRole: 'auction_house', description: 'B', evidence: {} }),
  },
  {
    name: 'provenance event by serial',
    method: 'POST',
    path: () => '/auction/provenance/events',
    body: (id) => ({
      objectId: id('serial'),
      eventType: 'cataloged',
      actorRole: 'auction_house',
      description: 'B',
      evidence: {},
    }),
  },
  { name: 'provenance history', method: 'GET', path: (id) => `/auction/objects/${id('serial')}/provenance` },
  { name: 'provenance history by id', method: 'GET', path: (id) => `/auction/objects/${id('objectId')}/provenance` },
  {
    name: 'transfer initiate',
    method: 'POST',
    path: () => '/auction/transfers/initiate',
    body: (id) => ({ objectId: id('objectId'), fromOwnerId: 'client-jane', toOwnerId: 'b', salePrice: 1, saleCurrency: 'EUR' }),
  },
  {
    name: 'transfer confirm',
    method: 'POST',
    path: (id) => `/auction/transfers/${id('transferId')}/confirm`,
    body: () => ({ transferCode: '000000' }),
  },
  { name: 'PATCH link', method: 'PATCH', path: (id) => `/links/${id('linkId')}`, body: () => ({ title: 'B was here' }) },
  { name: 'DELETE link', method: 'DELETE', path: (id) => `/links/${id('linkId')}` },
  { name: 'DELETE block', method: 'DELETE', path: (id) => `/blocklist/${id('blockId')}` },
  { name: 'revoke claim', method: 'POST', path: (id) => `/gtins/${id('claimId')}/revoke` },
  { name: 'revoke api key', method: 'POST', path: (id) => `/keys/${id('apiKeyId')}/revoke` },
  { name: 'revoke public key', method: 'POST', path: (id) => `/keys/${id('publicKeyId')}/revoke` },
  { name: 'revoke signing key', method: 'POST', path: (id) => `/keys/${id('signingKeyId')}/revoke` },
  { name: 'rotate api key', method: 'POST', path: (id) => `/keys/${id('apiKeyId')}/rotate`, body: () => ({ graceSeconds: 900 }) },
  { name: 'GET endpoint', method: 'GET', path: (id) => `/webhooks/endpoints/${id('endpointId')}` },
  {
    name: 'PATCH endpoint',
    method: 'PATCH',
    path: (id) => `/webhooks/endpoints/${id('endpointId')}`,
    body: () => ({ description: 'B' }),
  },
  { name: 'disable endpoint', method: 'POST', path: (id) => `/webhooks/endpoints/${id('endpointId')}/disable` },
  { name: 'rotate endpoint secret', method: 'POST', path: (id) => `/webhooks/endpoints/${id('endpointId')}/rotate-secret` },
  { name: 'test endpoint', method: 'POST', path: (id) => `/webhooks/endpoints/${id('endpointId')}/test` },
  { name: 'endpoint messages', method: 'GET', path: (id) => `/webhooks/endpoints/${id('endpointId')}/messages` },
  {
    name: 'message attempts',
    method: 'GET',
    path: (id) => `/webhooks/endpoints/${id('endpointId')}/messages/${id('messageId')}/attempts`,
  },
  {
    name: 'A message under B endpoint attempts',
    method: 'GET',
    path: (id) => `/webhooks/endpoints/${ids.endpointB}/messages/${id('messageId')}/attempts`,
  },
  {
    name: 'A message under B endpoint replay',
    method: 'POST',
    path: (id) => `/webhooks/endpoints/${ids.endpointB}/messages/${id('messageId')}/replay`,
  },
  {
    name: 'message replay',
    method: 'POST',
    path: (id) => `/webhooks/endpoints/${id('endpointId')}/messages/${id('messageId')}/replay`,
  },
  { name: 'replay all', method: 'POST', path: (id) => `/webhooks/endpoints/${id('endpointId')}/replay`, body: () => ({}) },
  { name: 'DELETE endpoint', method: 'DELETE', path: (id) => `/webhooks/endpoints/${id('endpointId')}` },
];

async function send(key: string, probe: Probe, id: (name: string) => string): Promise<ApiResponse<Json>> {
  if (probe.method === 'PHOTO') return upload(key, probe.path(id), 'movement', await picture(7, { format: 'png' })) as never;
  const body = probe.body?.(id);
  return api(probe.method, probe.path(id), body === undefined ? { key } : { key, body });
}

function masked(value: unknown, secrets: string[]): string {
  let text = JSON.stringify(value);
  for (const secret of [...secrets].sort((x, y) => y.length - x.length)) {
    if (secret)
      text = text.split(secret).join('<ID>').split(secret.toUpperCase()).join('<ID>').split(secret.toLowerCase()).join('<ID>');
  }
  return text;
}

const variants: Array<[string, (value: string) => string]> = [
  ['as is', (value) => value],
  ['upper case', (value) => value.toUpperCase()],
  ['percent-encoded', (value) => [...value].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')],
];

describe('every id-taking route, as another tenant and as A’s own test key', () => {
  it.each(probes.map((probe) => [probe.name, probe] as const))('%s answers as for an unknown id', async (_name, probe) => {
    const mismatches: string[] = [];
    // Test keys may make 100 requests a day: fresh ones for each route.
    const bTest = await freshTestKey(b);
    const aTest = await freshTestKey(a);
    for (const [who, key] of [
      ['B live *', () => b.star],
      ['B test *', () => bTest],
      ['A test *', () => aTest],
    ] as const) {
      for (const [variant, form] of variants) {
        const used: string[] = [];
        const usedUnknown: string[] = [];
        const run = who.includes('test') ? onADayOfItsOwn : <T>(work: () => Promise<T>) => work();
        const [foreign, unknown] = await run(async () => [
          await send(key(), probe, (name) => {
            used.push(ids[name], form(ids[name]));
            return form(ids[name]);
          }),
          await send(key(), probe, (name) => {
            usedUnknown.push(unknownLike(ids[name]), form(unknownLike(ids[name])));
            return form(unknownLike(ids[name]));
          }),
        ]);
        const got = masked(shape(foreign), used);
        const expected = masked(shape(unknown), usedUnknown);
        if (got !== expected || foreign.status < 400) {
          mismatches.push(`${who} ${variant}: A's id ${got} vs unknown ${expected}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
  });
});

describe('lists, filters, cursors and events, as another tenant and as A’s test key', () => {
  let receiver: Server;
  const received: Array<{ path: string; body: Json }> = [];
  let secrets: string[];

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        try {
          received.push({ path: request.url ?? '', body: JSON.parse(body) });
        } catch {
          // not JSON
        }
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as AddressInfo).port;
    const all = [
      'scan.suspicious',
      'scan.counterfeit',
      'code.reported',
      'code.blocked',
      'code.unblocked',
      'transfer.completed',
      'transfer.locked',
      'transfer.cancelled',
    ];
    for (const [who, key] of [
      ['a-live', a.star],
      ['b-live', b.star],
      ['a-test', a.test],
      ['b-test', b.test],
    ] as const) {
      const created = await onADayOfItsOwn(() =>
        api('POST', '/webhooks/endpoints', { key, body: { url: `http://127.0.0.1:${port}/${who}`, eventTypes: all } }),
      );
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    // A's distinctive settings and data, beyond the first sweep's.
    const me = await api('GET', '/accounts/me', { key: a.star });
    ids.aKeyId = me.body.key.id;
    const branding = await api('PUT', '/account/branding', {
      key: a.star,
      body: { displayName: 'Maison A Secret Brand', primaryColor: '#123456' },
    });
    expect(branding.status, JSON.stringify(branding.body)).toBe(200);
    const config = await api('GET', '/compliance/config', { key: a.star });
    ids.configBefore = config.body;
    const withdrawn = await api('POST', '/code/generate', { key: a.star, body: { gtin: gtinA, serialNumber: 'A-9' } });
    expect(withdrawn.status).toBe(201);
    ids.withdrawnUrl = withdrawn.body.url;
    for (let n = 3; n <= 5; n += 1) {
      expect(
        (
          await api('POST', '/code/generate', {
            key: a.star,
            body: { gtin: gtinA, serialNumber: `A-${n}`, batchNumber: 'LOT-A' },
          })
        ).status,
      ).toBe(201);
    }
    secrets = [
      ...[
        gtinA,
        'A-1',
        'A-9',
        'LOT-A',
        'Maison A',
        'A secret schema',
        'recall',
        'a.example',
        'A Submariner',
        'client-jane',
        a.id,
      ],
      ...[
        'assetId',
        'reportId',
        'blockId',
        'linkId',
        'schemaId',
        'publicKeyId',
        'apiKeyId',
        'aKeyId',
        'endpointId',
        'objectId',
        'serial',
        'transferId',
      ].map((name) => ids[name] as string),
    ];
  }, 60_000);

  afterAll(async () => {
    await new Promise((resolve) => receiver?.close(resolve));
  });

  const lists = [
    '/codes',
    `/codes?gtin=${gtinA}`,
    '/codes?serial=A-1',
    `/codes?gtin=${gtinA}&serial=A-1`,
    '/codes?batch=LOT-A',
    '/scans',
    `/scans?gtin=${gtinA}`,
    `/scans?gtin=${gtinA}&serial=A-9`,
    '/scans?serial=A-1',
    '/scans?format=csv',
    '/scans/aggregates?groupBy=verdict&bucket=hour',
    '/scans/top-codes',
    '/scans/countries',
    '/blocklist',
    `/blocklist?gtin=${gtinA}`,
    `/blocklist?gtin=${gtinA}&status=removed`,
    '/links',
    `/links?gtin=${gtinA}`,
    '/code/reports',
    '/code/reports?status=pending',
    '/webhooks/endpoints',
    '/auction/dashboard/objects',
    '/auction/dashboard/objects?status=consigned',
    '/schemas',
    '/schemas?vertical=luxury',
    '/gtins',
    '/gtins?status=revoked',
    '/keys',
    '/keys?type=public',
    '/keys?type=signing',
    '/usage',
    '/usage/keys',
    '/compliance/config',
    '/account/branding',
    '/accounts/me',
  ];

  it.each(lists)('GET %s shows B and A’s test key nothing of A’s live data', async (path) => {
    const leaks: string[] = [];
    for (const [who, key, forbidden] of [
      ['B live', b.star, secrets],
      ['B test', await freshTestKey(b), secrets],
      [
        'A test',
        await freshTestKey(a),
        secrets.filter((secret) => secret !== a.id && secret !== 'Maison A' && secret !== ids.aKeyId),
      ],
    ] as const) {
      const [response, text] = await onADayOfItsOwn(async () => {
        const answer = await fetch(`${t.url}/api/v1${path}`, { headers: { 'x-api-key': key } });
        return [answer, await answer.text()] as const;
      });
      if (response.status >= 400) leaks.push(`${who}: ${response.status} ${text.slice(0, 200)}`);
      for (const secret of forbidden) if (text.includes(secret)) leaks.push(`${who}: ${secret} in ${text.slice(0, 600)}`);
    }
    expect(leaks).toEqual([]);
  });

  it('GET /keys?createdBy=<A’s key> lists nothing of A', async () => {
    const listed = await api('GET', `/keys?createdBy=${ids.aKeyId}`, { key: b.star });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.keys).toEqual([]);
    // A's test key sees the test keys A's live key made (test data of A), never a live one.
    const ownTest = await onADayOfItsOwn(async () => api('GET', `/keys?createdBy=${ids.aKeyId}`, { key: await freshTestKey(a) }));
    expect(ownTest.body.keys.filter((key: Json) => key.environment !== 'test')).toEqual([]);
  });

  it('A’s cursors give B only B’s data', async () => {
    for (const path of [
      '/codes?limit=1',
      '/keys?limit=1',
      '/auction/dashboard/objects?limit=1',
      '/schemas?limit=1',
      '/blocklist?limit=1',
      '/links?limit=1',
    ]) {
      const first = await api('GET', path, { key: a.star });
      expect(first.status, path).toBe(200);
      const cursor = first.body.pagination?.nextCursor ?? first.body.nextCursor;
      if (!cursor) continue;
      const response = await fetch(`${t.url}/api/v1${path}&cursor=${encodeURIComponent(cursor)}`, {
        headers: { 'x-api-key': b.star },
      });
      const text = await response.text();
      for (const secret of secrets) expect(text, `${path}: ${text.slice(0, 300)}`).not.toContain(secret);
    }
  });

  it('events about A’s codes reach A’s endpoints only', async () => {
    const forged = (ids.url as string).replace(/sig=[A-Za-z0-9_-]{6}/, 'sig=AAAAAA');
    for (const key of [b.star, await freshTestKey(b), await freshTestKey(a)]) {
      await onADayOfItsOwn(async () => {
        await api('POST', '/code/verify', {
          key,
          body: { url: ids.withdrawnUrl, location: { latitude: 48.85, longitude: 2.35 } },
        });
        await api('POST', '/code/verify', { key, body: { url: forged } });
      });
    }
    const report = await api('POST', '/code/report', { key: b.star, body: { url: ids.withdrawnUrl, reason: 'B saw it' } });
    expect(report.status, JSON.stringify(report.body)).toBe(201);
    await waitFor('A hears of the scans', async () =>
      received.some((each) => each.path === '/a-live' && each.body.type === 'scan.counterfeit') ? true : undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const elsewhere = received.filter((each) => each.path !== '/a-live');
    expect(elsewhere.map((each) => `${each.path} ${each.body.type} ${JSON.stringify(each.body.data).slice(0, 200)}`)).toEqual([]);
  });

  it('leaves A’s data as it was after every write B tried', async () => {
    const endpoint = await api('GET', `/webhooks/endpoints/${ids.endpointId}`, { key: a.star });
    expect(endpoint.body).toMatchObject({ description: 'A SOC', url: 'http://127.0.0.1:9/hook' });
    const schema = await api('GET', `/schemas/${ids.schemaId}`, { key: a.star });
    expect(schema.body).toMatchObject({ name: 'A secret schema', version: 1 });
    const keys = (await api('GET', '/keys', { key: a.star })).body.keys as Json[];
    expect(keys.find((key) => key.id === ids.apiKeyId)).toMatchObject({ status: 'active', expiresAt: null });
    expect(keys.find((key) => key.id === ids.publicKeyId)).toMatchObject({ status: 'active' });
    const links = (await api('GET', '/links', { key: a.star })).body;
    expect(JSON.stringify(links)).toContain('Product A');
    const blocks = (await api('GET', '/blocklist', { key: a.star })).body;
    expect(blocks.blocks?.[0] ?? blocks).toMatchObject({ status: 'active' });
    const reports = (await api('GET', '/code/reports', { key: a.star })).body.reports as Json[];
    expect(reports.find((each) => each.reportId === ids.reportId)).toMatchObject({ status: 'pending' });
    const history = await api('GET', `/auction/objects/${ids.serial}/provenance`, { key: a.star });
    expect(history.body.events.map((each: Json) => each.type)).not.toContain('listed');
    const claims = (await api('GET', '/gtins', { key: a.star })).body.claims as Json[];
    expect(claims.find((claim) => claim.id === ids.claimId)).toMatchObject({ status: 'active' });
  });
});

describe('A’s test key writes nothing into A’s live data', () => {
  let code: Json;
  beforeAll(async () => {
    const made = await api('POST', '/code/generate', { key: a.star, body: { gtin: gtinA, serialNumber: 'LIVE-7' } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    code = made.body;
  });

  it('a test key’s scan of a live code is not in the live scans or the live code’s count', async () => {
    await onADayOfItsOwn(async () => {
      const key = await freshTestKey(a);
      const verified = await api('POST', '/code/verify', {
        key,
        body: { url: code.url, location: { latitude: 1, longitude: 1 } },
      });
      // A's test environment has no key of A's: KEY_NOT_FOUND, or a verdict; either way nothing live.
      expect([200, 404], JSON.stringify(verified.body)).toContain(verified.status);
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const scans = await api('GET', '/scans?serial=LIVE-7', { key: a.star });
    expect(scans.body.scans ?? scans.body.data).toEqual([]);
    const item = await api('GET', `/codes/${code.assetId}`, { key: a.star });
    expect(item.body.scans.count).toBe(0);
  });

  it('a test key can neither report nor block a live code', async () => {
    const [report, block] = await onADayOfItsOwn(async () => {
      const key = await freshTestKey(a);
      return [
        await api('POST', '/code/report', { key, body: { url: code.url, reason: 'from test' } }),
        await api('POST', '/blocklist', {
          key,
          body: { gtin: gtinA, serial: 'LIVE-7', kind: 'counterfeit', reason: 'test block' },
        }),
      ];
    });
    expect(report.status, JSON.stringify(report.body)).toBe(404);
    // A block made in test, if any, stays in test: the live code still verifies.
    expect([200, 201, 403]).toContain(block.status);
    const live = await api('POST', '/code/verify', { key: b.star, body: { url: code.url } });
    expect(live.body.verdict, JSON.stringify(live.body)).toBe('AUTHENTIC');
    const queue = (await api('GET', '/code/reports', { key: a.star })).body.reports as Json[];
    expect(queue.filter((each) => each.serial === 'LIVE-7')).toEqual([]);
  });

  it('a test key’s link is not served for the live item', async () => {
    const made = await onADayOfItsOwn(async () =>
      api('POST', '/links', {
        key: await freshTestKey(a),
        body: {
          gtin: gtinA,
          serial: 'LIVE-7',
          linkType: 'gs1:pip',
          href: 'https://test-only.example/x',
          title: 'T',
          type: 'text/html',
          default: true,
        },
      }),
    );
    expect([201, 403]).toContain(made.status);
    const resolved = await fetch(`${t.url}/01/${gtinA}/21/LIVE-7?linkType=gs1:pip`, { redirect: 'manual' });
    expect(resolved.headers.get('location') ?? '').not.toContain('test-only.example');
  });
});

describe('a GTIN that changes hands', () => {
  it('gives the new owner’s code of a reused serial none of the previous owner’s scan history', async () => {
    const gtin = '09506002123453';
    const c = await api('POST', '/accounts', { key: operator, body: { name: 'Former owner C', tier: 'enterprise' } });
    const d = await api('POST', '/accounts', { key: operator, body: { name: 'New owner D', tier: 'enterprise' } });
    const cKey = c.body.apiKey.secret as string;
    const dKey = d.body.apiKey.secret as string;
    const grantC = await api('POST', `/accounts/${c.body.account.id}/gtins`, { key: operator, body: { gtin } });
    expect(grantC.status, JSON.stringify(grantC.body)).toBe(201);
    const codeC = await api('POST', '/code/generate', { key: cKey, body: { gtin, serialNumber: 'SHARED-1' } });
    expect(codeC.status, JSON.stringify(codeC.body)).toBe(201);
    for (let n = 0; n < 3; n += 1) {
      const scanned = await api('POST', '/code/verify', { key: cKey, body: { url: codeC.body.url } });
      expect(scanned.body.verdict).toBe('AUTHENTIC');
    }
    const seenByC = await api('POST', '/code/verify', { key: cKey, body: { url: codeC.body.url } });
    const firstSeenByC = seenByC.body.metadata.firstSeen as string;

    // The operator takes the GTIN from C and grants it to D, which prints its own serial SHARED-1.
    t.clock.advance(2 * 3_600_000);
    expect((await api('POST', `/gtins/${grantC.body.id}/revoke`, { key: operator })).status).toBe(200);
    const grantD = await api('POST', `/accounts/${d.body.account.id}/gtins`, { key: operator, body: { gtin } });
    expect(grantD.status, JSON.stringify(grantD.body)).toBe(201);
    const codeD = await api('POST', '/code/generate', { key: dKey, body: { gtin, serialNumber: 'SHARED-1' } });
    expect(codeD.status, JSON.stringify(codeD.body)).toBe(201);

    // D's code has never been scanned: its first scan is its first, not C's fifth.
    const first = await api('POST', '/code/verify', { key: dKey, body: { url: codeD.body.url } });
    expect(first.body.verdict).toBe('AUTHENTIC');
    // On the reviewed code: firstSeen is C's first scan and totalScans 5 (C's four and this one), since
    // verify-service counts scans under `<environment>:<gtin>:<serial>` whoever owns the item
    // (services/verify-service/src/handlers/verify-code.ts, scanSubject).
    expect({ firstSeenIsCs: first.body.metadata.firstSeen === firstSeenByC, totalScans: first.body.metadata.totalScans }).toEqual(
      {
        firstSeenIsCs: false,
        totalScans: 1,
      },
    );
    expect(Date.parse(first.body.metadata.firstSeen)).toBeGreaterThanOrEqual(Date.parse(codeD.body.createdAt));
  });
});
