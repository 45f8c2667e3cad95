import { createHash, randomUUID } from 'node:crypto';
import { createPostgresDatabase, type SqlDatabase } from '@hallmark/sql';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earlyInWindow } from '../support/client-address.ts';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { startTestProduct, type TestProduct } from '../support/embedded.ts';

// Idempotency-Key on every route that creates something (issue #17, item 4; docs/API.md, Idempotency-Key).

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: Json;
}

const leaseMs = 1_500;
const gtin = '09506000134352';
const otherGtin = '09506000134369';
const photoGtin = '09506000134376';

async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? (JSON.parse(text) as Json) : {} };
}

async function send(
  url: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; idempotencyKey?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return answerOf(
    await fetch(`${url}/api/v1${path}`, {
      method,
      headers: {
        ...options.headers,
        ...(options.key ? { 'x-api-key': options.key } : {}),
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(options.idempotencyKey !== undefined ? { 'idempotency-key': options.idempotencyKey } : {}),
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    }),
  );
}

async function uploadPhoto(url: string, key: string, objectId: string, angle: string, bytes: Buffer, idempotencyKey?: string) {
  const form = new FormData();
  form.append('angle', angle);
  form.append('photo', new Blob([bytes], { type: 'image/png' }), 'photo.png');
  return answerOf(
    await fetch(`${url}/api/v1/auction/objects/${objectId}/photos`, {
      method: 'POST',
      headers: { 'x-api-key': key, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
      body: form,
    }),
  );
}

/** A PNG with a few boxes of detail, different per seed. */
async function photo(seed: number, side = 256): Promise<Buffer> {
  const pixels = Buffer.alloc(side * side * 3, 170);
  for (let box = 0; box < 4; box++) {
    const x0 = (seed * 37 + box * 53) % (side - 40);
    const y0 = (seed * 61 + box * 29) % (side - 40);
    for (let y = y0; y < y0 + 40; y++) {
      for (let x = x0; x < x0 + 40; x++)
        pixels.fill((seed * 13 + box * 71 + x * y) % 255, (y * side + x) * 3, (y * side + x) * 3 + 3);
    }
  }
  return sharp(pixels, { raw: { width: side, height: side, channels: 3 } })
    .png()
    .toBuffer();
}

function expectError(answer: Answer, status: number, code: string) {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.body.error?.code, answer.text).toBe(code);
}

/**
 * The same key twice: one resource and the same answer, the second marked replayed; the same key
 * with another request: 422 and nothing made.
 */
async function expectIdempotent(
  run: (variant: 'first' | 'other', idempotencyKey: string) => Promise<Answer>,
  count?: () => Promise<number>,
): Promise<Answer> {
  const idempotencyKey = `idem-${randomUUID()}`;
  const before = count ? await count() : 0;
  const first = await run('first', idempotencyKey);
  expect(first.status, first.text).toBeGreaterThanOrEqual(200);
  expect(first.status, first.text).toBeLessThan(300);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  const retry = await run('first', idempotencyKey);
  expect(retry.status, retry.text).toBe(first.status);
  expect(retry.headers.get('idempotent-replayed')).toBe('true');
  expect(retry.headers.get('content-type')).toBe(first.headers.get('content-type'));
  expect(retry.text).toBe(first.text);
  if (count) expect(await count()).toBe(before + 1);
  expectError(await run('other', idempotencyKey), 422, 'IDEMPOTENCY_KEY_REUSED');
  if (count) expect(await count()).toBe(before + 1);
  return first;
}

/** What idempotency.ts takes a JSON request to be: method, path and the body as parsed. */
function requestHashOf(path: string, body: unknown): string {
  return createHash('sha256')
    .update(`POST\n/api/v1${path}\n`)
    .update(`${JSON.stringify('body')}:${JSON.stringify(JSON.stringify(body))}\n`)
    .digest('hex');
}

/** The row a gateway leaves when it dies while the first attempt with this key runs: claimed, leased, unanswered. */
async function leaveCrashedClaim(
  db: SqlDatabase,
  claim: {
    accountId: string;
    apiKeyId: string;
    operation: string;
    idempotencyKey: string;
    path: string;
    body: unknown;
    now: Date;
  },
) {
  await db.query(
    `INSERT INTO idempotent_requests
       (account_id, environment, api_key_id, operation, key_hash, request_hash, claim, lease_until, created_at, expires_at)
     VALUES ($1, 'live', $2, $3, $4, $5, 'crashed-attempt', $6, $7, $8)`,
    [
      claim.accountId,
      claim.apiKeyId,
      claim.operation,
      createHash('sha256').update(claim.idempotencyKey).digest('hex'),
      requestHashOf(claim.path, claim.body),
      new Date(claim.now.getTime() + leaseMs),
      claim.now,
      new Date(claim.now.getTime() + 86_400_000),
    ],
  );
}

async function createAccount(url: string, operator: string, name: string, tier = 'enterprise') {
  const created = await send(url, 'POST', '/accounts', { key: operator, body: { name, tier } });
  expect(created.status, created.text).toBe(201);
  return {
    id: created.body.account.id as string,
    key: created.body.apiKey.secret as string,
    keyId: created.body.apiKey.id as string,
  };
}

let serialCounter = 0;
const nextSerial = () => `IDEM-${Date.now().toString(36)}-${++serialCounter}`;

describe('Idempotency-Key, embedded', () => {
  let t: TestProduct;
  let operator: string;
  let house: { id: string; key: string; keyId: string };
  const api = (method: string, path: string, options: Parameters<typeof send>[3] = {}) => send(t.url, method, path, options);

  const register = async (title: string) => {
    const registered = await api('POST', '/auction/objects/register', {
      key: house.key,
      body: { title, category: 'watch', ownerId: 'client-jane' },
    });
    expect(registered.status, registered.text).toBe(201);
    return registered.body.object as { id: string; service_serial: string };
  };
  const historyLength = async (objectId: string) => {
    const history = await api('GET', `/auction/objects/${objectId}/provenance`, { key: house.key });
    expect(history.status, history.text).toBe(200);
    return (history.body.events as unknown[]).length;
  };

  beforeAll(async () => {
    t = await startTestProduct({ HALLMARK_IDEMPOTENCY_LEASE_MS: String(leaseMs), HALLMARK_PUBLIC_RATE_LIMIT: '1000' });
    operator = t.product.generatedOperatorKey as string;
    house = await createAccount(t.url, operator, 'Idempotent house');
    // Only the GTIN's owner signs its codes (docs/SIGNING.md).
    const grant = await api('POST', `/accounts/${house.id}/gtins`, { key: operator, body: { gtin } });
    expect(grant.status, grant.text).toBe(201);
  });

  afterAll(async () => {
    await t?.stop();
  });

  it('documents the header on exactly the operations that create something (POST answering 201, batches, a new webhook secret, a sale)', async () => {
    // Not 201, but each makes something a lost answer would lose: a batch's codes, a CSV's blocks (a
    // retry without the key blocks every line again), a rotation's new secret, a confirmed sale (a
    // retry without the key finds it completed: 409).
    const creatingWithout201 = ['generateCodeBatch', 'createBlocksFromCsv', 'rotateWebhookSecret', 'confirmTransfer'];
    const document = (await api('GET', '/openapi.json')).body;
    const marked: string[] = [];
    const creating: string[] = [];
    for (const operations of Object.values(document.paths as Record<string, Record<string, Json>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        const parameters = (operation.parameters ?? []) as Array<{ name: string; in: string }>;
        if (parameters.some((parameter) => parameter.name === 'Idempotency-Key' && parameter.in === 'header')) {
          marked.push(operation.operationId);
          expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['409', '422']));
        }
        // Keys are per API key: a keyless operation (the console's sign-in, POST /sessions) has none to keep them under.
        const keyless = Array.isArray(operation.security) && operation.security.length === 0;
        if (method === 'post' && !keyless && (operation.responses['201'] || creatingWithout201.includes(operation.operationId))) {
          creating.push(operation.operationId);
        }
      }
    }
    expect(marked.sort()).toEqual(creating.sort());
    expect(marked).toEqual(
      expect.arrayContaining(['recordProvenanceEvent', 'uploadAuctionPhoto', 'generateCodeBatch', 'grantGtin']),
    );
  });

  it('registers one object for a registration sent twice', async () => {
    const dashboard = async () =>
      ((await api('GET', '/auction/dashboard/objects?limit=100', { key: house.key })).body.objects as unknown[]).length;
    const title = `Lot ${randomUUID()}`;
    await expectIdempotent(
      (variant, idempotencyKey) =>
        api('POST', '/auction/objects/register', {
          key: house.key,
          idempotencyKey,
          body: { title: variant === 'first' ? title : `${title} (other)`, category: 'watch', ownerId: 'client-jane' },
        }),
      dashboard,
    );
  });

  it('answers a registration whose answer was lost after the object was stored with that object, not a second one', async () => {
    const idempotencyKey = `lost-${randomUUID()}`;
    const body = { title: `Lost answer ${randomUUID()}`, category: 'watch', ownerId: 'client-jane' };
    const first = await api('POST', '/auction/objects/register', { key: house.key, idempotencyKey, body });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    await t.product.db.query('DELETE FROM idempotent_requests');
    const retried = await api('POST', '/auction/objects/register', { key: house.key, idempotencyKey, body });
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.body).toEqual(first.body);
    const stored = await t.product.db.query<{ n: number }>('SELECT count(*)::int AS n FROM auction_objects WHERE title = $1', [
      body.title,
    ]);
    expect(stored[0]?.n).toBe(1);
  });

  it('records one provenance event for an event sent twice', async () => {
    const object = await register('Lot for events');
    await expectIdempotent(
      (variant, idempotencyKey) =>
        api('POST', '/auction/provenance/events', {
          key: house.key,
          idempotencyKey,
          body: { objectId: object.id, eventType: 'cataloged', actorRole: 'auction_house', description: variant },
        }),
      () => historyLength(object.id),
    );
  });

  it('binds one photo for an upload sent twice (the file and fields decide whether it is the same request)', async () => {
    const object = await register('Lot for photos');
    const dial = await photo(1);
    const other = await photo(2);
    const first = await expectIdempotent(
      (variant, idempotencyKey) =>
        uploadPhoto(t.url, house.key, object.id, 'dial', variant === 'first' ? dial : other, idempotencyKey),
      () => historyLength(object.id),
    );
    expect(first.status).toBe(201);
    expect(first.body.replaced).toBe(false);
    // Another angle with the same file and key is another request too.
    const idempotencyKey = `idem-${randomUUID()}`;
    const movement = await photo(3);
    const bound = await uploadPhoto(t.url, house.key, object.id, 'movement', movement, idempotencyKey);
    expect(bound.status, bound.text).toBe(201);
    expectError(
      await uploadPhoto(t.url, house.key, object.id, 'case_back', movement, idempotencyKey),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
  });

  it('starts one transfer for an initiation sent twice', async () => {
    const object = await register('Lot for a transfer');
    const first = await expectIdempotent((variant, idempotencyKey) =>
      api('POST', '/auction/transfers/initiate', {
        key: house.key,
        idempotencyKey,
        body: {
          objectId: object.id,
          fromOwnerId: 'client-jane',
          toOwnerId: variant === 'first' ? 'buyer-1' : 'buyer-2',
          salePrice: 1000,
          saleCurrency: 'EUR',
        },
      }),
    );
    // The replayed code is the one that works: the transfer completes with it.
    const confirmed = await api('POST', `/auction/transfers/${first.body.transferId}/confirm`, {
      key: house.key,
      body: { transferCode: first.body.transferCode },
    });
    expect(confirmed.status, confirmed.text).toBe(200);
  });

  it('makes one API key for a key request sent twice, and keeps no secret readable in the database', async () => {
    const keys = async () => ((await api('GET', '/keys?limit=100', { key: house.key })).body.keys as unknown[]).length;
    const first = await expectIdempotent(
      (variant, idempotencyKey) =>
        api('POST', '/keys', { key: house.key, idempotencyKey, body: { name: `ci-${variant}`, scopes: ['assets:read'] } }),
      keys,
    );
    const secret = first.body.secret as string;
    expect(secret).toMatch(/^svc_/);
    const rows = await t.product.db.query('SELECT * FROM idempotent_requests');
    expect(rows.length).toBeGreaterThan(0);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(secret.slice(-32));
    expect(stored).not.toContain(Buffer.from(secret).toString('base64').slice(8, 40));
    expect(stored).not.toContain('idem-');
  });

  it('answers a generate sent twice with the same signed code', async () => {
    const serialNumber = nextSerial();
    const first = await expectIdempotent((variant, idempotencyKey) =>
      api('POST', '/code/generate', {
        key: house.key,
        idempotencyKey,
        body: { gtin, serialNumber: variant === 'first' ? serialNumber : nextSerial() },
      }),
    );
    expect(first.status).toBe(201);
    // Without the key the same item is a duplicate: the retry above was answered, not run.
    expectError(await api('POST', '/code/generate', { key: house.key, body: { gtin, serialNumber } }), 409, 'DUPLICATE_SERIAL');
  });

  it('answers a batch sent twice with the same codes', async () => {
    const items = [
      { gtin, serialNumber: nextSerial() },
      { gtin, serialNumber: nextSerial() },
    ];
    const first = await expectIdempotent((variant, idempotencyKey) =>
      api('POST', '/code/generate/batch', {
        key: house.key,
        idempotencyKey,
        body: { items: variant === 'first' ? items : [{ gtin, serialNumber: nextSerial() }] },
      }),
    );
    expect(first.status).toBe(200);
    expect((first.body.results as Json[]).every((result) => result.code)).toBe(true);
  });

  it('answers a generate and a batch whose answers were lost after their codes were stored with those codes', async () => {
    const idempotencyKey = `lost-${randomUUID()}`;
    const body = { gtin, serialNumber: nextSerial() };
    const first = await api('POST', '/code/generate', { key: house.key, idempotencyKey, body });
    expect(first.status).toBe(201);
    // The gateway died after code-service stored the code and before it stored the answer.
    await t.product.db.query('DELETE FROM idempotent_requests');
    const retried = await api('POST', '/code/generate', { key: house.key, idempotencyKey, body });
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.body).toEqual(first.body);

    const batchKey = `lost-${randomUUID()}`;
    const items = [{ gtin, serialNumber: nextSerial() }, { gtin: 'not a gtin' }, { gtin, serialNumber: nextSerial() }];
    const batch = await api('POST', '/code/generate/batch', { key: house.key, idempotencyKey: batchKey, body: { items } });
    expect(batch.status).toBe(200);
    await t.product.db.query('DELETE FROM idempotent_requests');
    const batchRetried = await api('POST', '/code/generate/batch', { key: house.key, idempotencyKey: batchKey, body: { items } });
    expect(batchRetried.body).toEqual(batch.body);
    const stored = await t.product.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM codes WHERE serial = ANY($1::text[])',
      [[body.serialNumber, items[0]?.serialNumber, items[2]?.serialNumber]],
    );
    expect(stored[0]?.n).toBe(3);
  });

  it('creates one schema for a schema sent twice', async () => {
    const schemas = async () => ((await api('GET', '/schemas?limit=100', { key: house.key })).body.schemas as unknown[]).length;
    await expectIdempotent(
      (variant, idempotencyKey) =>
        api('POST', '/schemas', {
          key: house.key,
          idempotencyKey,
          body: {
            name: `Bottle ${variant}`,
            vertical: 'luxury',
            fields: [{ name: 'volumeMl', type: 'integer', required: true }],
          },
        }),
      schemas,
    );
  });

  it('grants a GTIN once for a grant sent twice, and makes one account for an account sent twice', async () => {
    const grantee = await createAccount(t.url, operator, 'Grantee');
    const claims = async () =>
      ((await api('GET', `/accounts/${grantee.id}/gtins?limit=100`, { key: operator })).body.claims as unknown[]).length;
    await expectIdempotent(
      (variant, idempotencyKey) =>
        api('POST', `/accounts/${grantee.id}/gtins`, {
          key: operator,
          idempotencyKey,
          body: variant === 'first' ? { gtin: otherGtin } : { gtin: photoGtin },
        }),
      claims,
    );
    const account = await expectIdempotent((variant, idempotencyKey) =>
      api('POST', '/accounts', { key: operator, idempotencyKey, body: { name: `Maison ${variant}`, tier: 'starter' } }),
    );
    expect(account.body.account.id).toMatch(/^acc_/);
  });

  it('keeps keys apart per account and per operation', async () => {
    const idempotencyKey = `idem-${randomUUID()}`;
    const other = await createAccount(t.url, operator, 'Other tenant');
    const mine = await api('POST', '/schemas', {
      key: house.key,
      idempotencyKey,
      body: { name: 'Scoped', vertical: 'luxury', fields: [{ name: 'a', type: 'string' }] },
    });
    expect(mine.status, mine.text).toBe(201);
    // Another account's use of the same key is its own: it runs and sees nothing of ours.
    const theirs = await api('POST', '/schemas', {
      key: other.key,
      idempotencyKey,
      body: { name: 'Scoped', vertical: 'luxury', fields: [{ name: 'a', type: 'string' }] },
    });
    expect(theirs.status, theirs.text).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
    // And so is another operation's.
    const registered = await api('POST', '/auction/objects/register', {
      key: house.key,
      idempotencyKey,
      body: { title: 'Scoped lot', category: 'watch' },
    });
    expect(registered.status, registered.text).toBe(201);
    expect(registered.headers.get('idempotent-replayed')).toBeNull();
  });

  describe('keys apart per API key of the account (a narrower key never gets a stronger key’s answer)', () => {
    const newKey = async (scopes: string[]) => {
      const made = await api('POST', '/keys', { key: house.key, body: { name: `scoped ${scopes.join(' ')}`, scopes } });
      expect(made.status, made.text).toBe(201);
      return { id: made.body.id as string, secret: made.body.secret as string };
    };
    /** The console's headers for a session signed in with `apiKey`: the session acts with that key. */
    const consoleOf = async (apiKey: string) => {
      const signedIn = await api('POST', '/sessions', { body: { apiKey } });
      expect(signedIn.status, signedIn.text).toBe(201);
      const token = /hallmark_session=([0-9a-f]{64})/.exec(signedIn.headers.get('set-cookie') ?? '')?.[1];
      expect(token).toBeDefined();
      return { cookie: `hallmark_session=${token}`, 'x-hallmark-console': '1' };
    };

    it('runs a keys:write key’s POST /keys with a * key’s Idempotency-Key on its own: 403, not the * key’s secret', async () => {
      const keyAdmin = await newKey(['keys:write']);
      const idempotencyKey = `idem-${randomUUID()}`;
      const body = { name: 'root', scopes: ['*'] };
      const created = await api('POST', '/keys', { key: house.key, idempotencyKey, body });
      expect(created.status, created.text).toBe(201);
      const secret = created.body.secret as string;
      expect(secret).toMatch(/^svc_live_/);
      // Without an Idempotency-Key the narrower key may not grant *; with the * key's, no more.
      expectError(await api('POST', '/keys', { key: keyAdmin.secret, body }), 403, 'INSUFFICIENT_SCOPE');
      const borrowed = await api('POST', '/keys', { key: keyAdmin.secret, idempotencyKey, body });
      expectError(borrowed, 403, 'INSUFFICIENT_SCOPE');
      expect(borrowed.headers.get('idempotent-replayed')).toBeNull();
      expect(borrowed.text).not.toContain(secret);
      // Its console session is the same key: refused too.
      const viaConsole = await api('POST', '/keys', { idempotencyKey, body, headers: await consoleOf(keyAdmin.secret) });
      expectError(viaConsole, 403, 'INSUFFICIENT_SCOPE');
      expect(viaConsole.text).not.toContain(secret);
      // The * key's own retry, by x-api-key or through its console session, still gets its answer.
      for (const retry of [
        await api('POST', '/keys', { key: house.key, idempotencyKey, body }),
        await api('POST', '/keys', { idempotencyKey, body, headers: await consoleOf(house.key) }),
      ]) {
        expect(retry.status, retry.text).toBe(201);
        expect(retry.headers.get('idempotent-replayed')).toBe('true');
        expect(retry.text).toBe(created.text);
      }
    });

    it('runs a keys:write key’s rotation with a * key’s Idempotency-Key on its own: 403, not the new secret', async () => {
      const keyAdmin = await newKey(['keys:write']);
      const target = await newKey(['*']);
      const idempotencyKey = `idem-${randomUUID()}`;
      const body = { graceSeconds: 900 };
      const rotated = await api('POST', `/keys/${target.id}/rotate`, { key: house.key, idempotencyKey, body });
      expect(rotated.status, rotated.text).toBe(201);
      const borrowed = await api('POST', `/keys/${target.id}/rotate`, { key: keyAdmin.secret, idempotencyKey, body });
      expectError(borrowed, 403, 'INSUFFICIENT_SCOPE');
      expect(borrowed.headers.get('idempotent-replayed')).toBeNull();
      expect(borrowed.text).not.toContain(rotated.body.secret as string);
      const retry = await api('POST', `/keys/${target.id}/rotate`, { key: house.key, idempotencyKey, body });
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.text).toBe(rotated.text);
    });

    it('runs another key’s request with the same Idempotency-Key as its own: no 422, no replay, and nothing of the first’s', async () => {
      const other = await newKey(['*']);
      const idempotencyKey = `idem-${randomUUID()}`;
      const body = { name: 'ci', scopes: ['assets:read'] };
      const first = await api('POST', '/keys', { key: house.key, idempotencyKey, body });
      expect(first.status, first.text).toBe(201);
      const theirs = await api('POST', '/keys', { key: other.secret, idempotencyKey, body });
      expect(theirs.status, theirs.text).toBe(201);
      expect(theirs.headers.get('idempotent-replayed')).toBeNull();
      expect(theirs.body.secret).not.toBe(first.body.secret);
      // Another request under the same Idempotency-Key is that key's own affair: 422 only for the key that used it.
      const changed = { name: 'ci', scopes: ['keys:read'] };
      expectError(await api('POST', '/keys', { key: house.key, idempotencyKey, body: changed }), 422, 'IDEMPOTENCY_KEY_REUSED');
      // Ids a service derives from the Idempotency-Key differ per key too: another object, not the first's.
      const lot = { title: `Per key ${randomUUID()}`, category: 'watch', ownerId: 'client-jane' };
      const mine = await api('POST', '/auction/objects/register', { key: house.key, idempotencyKey, body: lot });
      expect(mine.status, mine.text).toBe(201);
      const theirLot = await api('POST', '/auction/objects/register', { key: other.secret, idempotencyKey, body: lot });
      expect(theirLot.status, theirLot.text).toBe(201);
      expect(theirLot.headers.get('idempotent-replayed')).toBeNull();
      expect(theirLot.body.object.id).not.toBe(mine.body.object.id);
    });
  });

  it('refuses a key that is not 1 to 255 printable ASCII characters', async () => {
    const tooLong = await api('POST', '/schemas', {
      key: house.key,
      idempotencyKey: 'k'.repeat(256),
      body: { name: 'Too long', vertical: 'luxury', fields: [{ name: 'a', type: 'string' }] },
    });
    expectError(tooLong, 400, 'VALIDATION_ERROR');
    expect(tooLong.body.error?.details?.fields?.[0]?.field).toBe('Idempotency-Key');
  });

  it('releases the key when the first attempt fails, so a retry runs again', async () => {
    const newcomer = await createAccount(t.url, operator, 'Newcomer');
    const idempotencyKey = `idem-${randomUUID()}`;
    const body = { gtin: '05901234123457', serialNumber: nextSerial() };
    expectError(await api('POST', '/code/generate', { key: newcomer.key, idempotencyKey, body }), 403, 'GTIN_NOT_OWNED');
    const grant = await api('POST', `/accounts/${newcomer.id}/gtins`, { key: operator, body: { gtin: '05901234123457' } });
    expect(grant.status, grant.text).toBe(201);
    // The refusal was not kept: the same request with the same key runs, and now succeeds.
    const retried = await api('POST', '/code/generate', { key: newcomer.key, idempotencyKey, body });
    expect(retried.status, retried.text).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    // A request refused by validation leaves no claim behind either.
    const invalidKey = `idem-${randomUUID()}`;
    const invalid = await api('POST', '/code/generate', {
      key: newcomer.key,
      idempotencyKey: invalidKey,
      body: { gtin: '05901234123457' },
    });
    expect(invalid.status, invalid.text).toBe(400);
    const rows = await t.product.db.query('SELECT 1 FROM idempotent_requests WHERE key_hash = $1', [
      createHash('sha256').update(invalidKey).digest('hex'),
    ]);
    expect(rows).toHaveLength(0);
  });

  it('spends no quota on a replayed answer', async () => {
    const free = await createAccount(t.url, operator, 'Free brand', 'free');
    expect((await api('POST', `/accounts/${free.id}/gtins`, { key: operator, body: { prefix: '4006381' } })).status).toBe(201);
    const idempotencyKey = `idem-${randomUUID()}`;
    const body = { gtin: '04006381333931', serialNumber: nextSerial() };
    // The quota counts per UTC day (the product's clock is the machine's here): both generates in one day.
    await earlyInWindow(86_400_000, 30_000);
    const first = await api('POST', '/code/generate', { key: free.key, idempotencyKey, body });
    expect(first.status, first.text).toBe(201);
    const remaining = Number(first.headers.get('x-ratelimit-remaining'));
    expect(remaining).toBeGreaterThan(0);
    for (let retry = 0; retry < 3; retry++) {
      const replayed = await api('POST', '/code/generate', { key: free.key, idempotencyKey, body });
      expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    }
    const next = await api('POST', '/code/generate', {
      key: free.key,
      body: { gtin: '04006381333931', serialNumber: nextSerial() },
    });
    expect(next.status, next.text).toBe(201);
    expect(Number(next.headers.get('x-ratelimit-remaining'))).toBe(remaining - 1);
  });

  it('answers 409 with Retry-After at once while the first attempt holds the key, and runs a retry once a crashed attempt’s lease lapses', async () => {
    const object = await register('Lot after a crash');
    const events = await historyLength(object.id);
    const idempotencyKey = `idem-${randomUUID()}`;
    const body = { objectId: object.id, eventType: 'cataloged', actorRole: 'auction_house', description: 'after a crash' };
    await leaveCrashedClaim(t.product.db, {
      accountId: house.id,
      apiKeyId: house.keyId,
      operation: 'recordProvenanceEvent',
      idempotencyKey,
      path: '/auction/provenance/events',
      body,
      now: t.clock.now(),
    });
    const started = Date.now();
    const running = await api('POST', '/auction/provenance/events', { key: house.key, idempotencyKey, body });
    expect(Date.now() - started).toBeLessThan(1_000);
    expectError(running, 409, 'CONFLICT');
    expect(running.headers.get('retry-after')).toBe('1');
    expectError(
      await api('POST', '/auction/provenance/events', { key: house.key, idempotencyKey, body: { ...body, description: 'x' } }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
    expect(await historyLength(object.id)).toBe(events);
    t.clock.advance(leaseMs + 1);
    const recovered = await api('POST', '/auction/provenance/events', { key: house.key, idempotencyKey, body });
    expect(recovered.status, recovered.text).toBe(201);
    expect(recovered.headers.get('idempotent-replayed')).toBeNull();
    const replayed = await api('POST', '/auction/provenance/events', { key: house.key, idempotencyKey, body });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.text).toBe(recovered.text);
    expect(await historyLength(object.id)).toBe(events + 1);
  });

  // Last: it moves the product's clock a day on.
  it('forgets a key after 24 hours', async () => {
    const idempotencyKey = `idem-${randomUUID()}`;
    const body = (name: string) => ({ name, vertical: 'luxury', fields: [{ name: 'a', type: 'string' }] });
    expect((await api('POST', '/schemas', { key: house.key, idempotencyKey, body: body('Day one') })).status).toBe(201);
    t.clock.advance(86_400_000 + 1);
    const nextDay = await api('POST', '/schemas', { key: house.key, idempotencyKey, body: body('Day two') });
    expect(nextDay.status, nextDay.text).toBe(201);
    expect(nextDay.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('Idempotency-Key, distributed (two gateway replicas sharing the store)', () => {
  let product: RunningProduct;
  let db: SqlDatabase;
  let house: { id: string; key: string; keyId: string };
  let gatewayA: string;
  let gatewayB: string;

  beforeAll(async () => {
    product = await startDistributedProduct({ HALLMARK_IDEMPOTENCY_LEASE_MS: String(leaseMs) }, { gateways: 2 });
    [gatewayA, gatewayB] = product.gatewayUrls as [string, string];
    db = createPostgresDatabase({ connectionString: product.databaseUrl as string, applicationName: 'test-idempotency' });
    house = await createAccount(gatewayA, product.operatorKey, 'Distributed house');
    const grant = await send(gatewayA, 'POST', `/accounts/${house.id}/gtins`, { key: product.operatorKey, body: { gtin } });
    expect(grant.status, grant.text).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await db?.close();
    await product?.stop();
  });

  const registerObject = async () => {
    const registered = await send(gatewayA, 'POST', '/auction/objects/register', {
      key: house.key,
      body: { title: 'Distributed lot', category: 'watch', ownerId: 'client-jane' },
    });
    expect(registered.status, registered.text).toBe(201);
    return registered.body.object.id as string;
  };
  const historyLength = async (objectId: string) =>
    ((await send(gatewayB, 'GET', `/auction/objects/${objectId}/provenance`, { key: house.key })).body.events as unknown[])
      .length;

  it('answers a provenance event retried through another replica from the first', async () => {
    const objectId = await registerObject();
    let sent = 0;
    await expectIdempotent(
      (variant, idempotencyKey) =>
        send(sent++ % 2 === 0 ? gatewayA : gatewayB, 'POST', '/auction/provenance/events', {
          key: house.key,
          idempotencyKey,
          body: { objectId, eventType: 'cataloged', actorRole: 'auction_house', description: variant },
        }),
      () => historyLength(objectId),
    );
  });

  it('answers a generate retried through another replica with the same code', async () => {
    const serialNumber = nextSerial();
    let sent = 0;
    await expectIdempotent((variant, idempotencyKey) =>
      send(sent++ % 2 === 0 ? gatewayA : gatewayB, 'POST', '/code/generate', {
        key: house.key,
        idempotencyKey,
        body: { gtin, serialNumber: variant === 'first' ? serialNumber : nextSerial() },
      }),
    );
  });

  it('records one event for the same request sent to both replicas at once', async () => {
    const objectId = await registerObject();
    const events = await historyLength(objectId);
    const idempotencyKey = `idem-${randomUUID()}`;
    const body = { objectId, eventType: 'cataloged', actorRole: 'auction_house', description: 'at once' };
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        send(i % 2 === 0 ? gatewayA : gatewayB, 'POST', '/auction/provenance/events', { key: house.key, idempotencyKey, body }),
      ),
    );
    const created = answers.filter((answer) => answer.status === 201);
    expect(created.length).toBeGreaterThan(0);
    expect(created.filter((answer) => answer.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    for (const answer of created) expect(answer.text).toBe(created[0]?.text);
    for (const answer of answers.filter((answer) => answer.status !== 201)) {
      expectError(answer, 409, 'CONFLICT');
      expect(answer.headers.get('retry-after')).toBe('1');
    }
    expect(await historyLength(objectId)).toBe(events + 1);
  });

  it('runs a retry again once the lease of a gateway that died holding the key lapses', async () => {
    const objectId = await registerObject();
    const events = await historyLength(objectId);
    const idempotencyKey = `idem-${randomUUID()}`;
    const body = { objectId, eventType: 'cataloged', actorRole: 'auction_house', description: 'after a crash' };
    await leaveCrashedClaim(db, {
      accountId: house.id,
      apiKeyId: house.keyId,
      operation: 'recordProvenanceEvent',
      idempotencyKey,
      path: '/auction/provenance/events',
      body,
      now: new Date(),
    });
    for (const gateway of [gatewayA, gatewayB]) {
      const running = await send(gateway, 'POST', '/auction/provenance/events', { key: house.key, idempotencyKey, body });
      expectError(running, 409, 'CONFLICT');
      expect(running.headers.get('retry-after')).toBe('1');
    }
    await new Promise((resolve) => setTimeout(resolve, leaseMs + 100));
    const recovered = await send(gatewayB, 'POST', '/auction/provenance/events', { key: house.key, idempotencyKey, body });
    expect(recovered.status, recovered.text).toBe(201);
    const replayed = await send(gatewayA, 'POST', '/auction/provenance/events', { key: house.key, idempotencyKey, body });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.text).toBe(recovered.text);
    expect(await historyLength(objectId)).toBe(events + 1);
  });

  it('runs a generate again once the lease of a gateway that died holding its key lapses (not 409 for ever)', async () => {
    const idempotencyKey = `idem-${randomUUID()}`;
    const body = { gtin, serialNumber: nextSerial() };
    await leaveCrashedClaim(db, {
      accountId: house.id,
      apiKeyId: house.keyId,
      operation: 'generateCode',
      idempotencyKey,
      path: '/code/generate',
      body,
      now: new Date(),
    });
    const started = Date.now();
    const running = await send(gatewayB, 'POST', '/code/generate', { key: house.key, idempotencyKey, body });
    expect(Date.now() - started).toBeLessThan(1_000);
    expectError(running, 409, 'CONFLICT');
    await new Promise((resolve) => setTimeout(resolve, leaseMs + 100));
    const recovered = await send(gatewayA, 'POST', '/code/generate', { key: house.key, idempotencyKey, body });
    expect(recovered.status, recovered.text).toBe(201);
    const replayed = await send(gatewayB, 'POST', '/code/generate', { key: house.key, idempotencyKey, body });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.text).toBe(recovered.text);
  });
});
