// The auction area against another tenant, a buyer or seller in bad faith, and concurrent requests
// (a review of 2026-12-06, whose attacks the product withstood), over real HTTP against the embedded
// product: what the hostile-* and auction tests do not cover already.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { picture } from '../support/pictures.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let house: string;
let rival: string;

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

/** A request sent exactly as written, with a deadline: a hang is a failure, not a stuck test. */
async function raw(
  method: string,
  path: string,
  options: { key?: string; body?: string | Buffer; contentType?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; text: string }> {
  try {
    const response = await fetch(`${t.url}${path}`, {
      method,
      headers: {
        ...(options.key ? { 'x-api-key': options.key } : {}),
        ...(options.contentType ? { 'content-type': options.contentType } : {}),
        ...options.headers,
      },
      ...(options.body !== undefined ? { body: options.body } : {}),
      signal: AbortSignal.timeout(15_000),
    });
    return { status: response.status, text: await response.text() };
  } catch (error) {
    return { status: -1, text: String(error) };
  }
}

function expectError(response: ApiResponse<Json>, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

async function register(title: string, key = house, ownerId = 'client-jane') {
  const registered = await api('POST', '/auction/objects/register', { key, body: { title, category: 'watch', ownerId } });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  return registered.body.object as { id: string; service_serial: string };
}

const initiate = (
  objectId: string,
  toOwnerId = 'buyer-1',
  fromOwnerId = 'client-jane',
  key = house,
  headers?: Record<string, string>,
) =>
  api('POST', '/auction/transfers/initiate', {
    key,
    body: { objectId, fromOwnerId, toOwnerId, salePrice: 18_500, saleCurrency: 'EUR' },
    ...(headers ? { headers } : {}),
  });

const confirm = (transferId: string, transferCode: string, key = house, headers?: Record<string, string>) =>
  api('POST', `/auction/transfers/${transferId}/confirm`, { key, body: { transferCode }, ...(headers ? { headers } : {}) });

const cancel = (transferId: string, key = house) => api('POST', `/auction/transfers/${transferId}/cancel`, { key });

const wrongOf = (code: string, i = 0) => {
  const candidate = String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0');
  return candidate;
};

async function historyOf(objectId: string, key = house) {
  const history = await api('GET', `/auction/objects/${objectId}/provenance`, { key });
  expect(history.status, JSON.stringify(history.body)).toBe(200);
  return history.body as { chain_valid: boolean; events: Json[]; chain_of_custody: Json[] };
}

async function upload(key: string, objectId: string, angle: string, bytes: Buffer) {
  const form = new FormData();
  form.append('angle', angle);
  form.append('photo', new Blob([bytes], { type: 'image/png' }), 'photo.png');
  const response = await fetch(`${t.url}/api/v1/auction/objects/${objectId}/photos`, {
    method: 'POST',
    headers: { 'x-api-key': key },
    body: form,
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as Json };
}

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '1000' });
  const operator = t.product.generatedOperatorKey as string;
  const account = async (name: string) => {
    const created = await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.apiKey.secret as string;
  };
  house = await account('Maison Review Auction');
  rival = await account('Rival Review Auction');
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

describe('bad input on the auction routes', () => {
  // docs/API.md (input limits, issue #16): malformed input is a 4xx naming the problem, "never a 500".
  it('answers every malformed request with a 4xx, never a 5xx or a hang', async () => {
    const object = await register('Bad input lot');
    const started = await initiate(object.id);
    expect(started.status).toBe(201);
    const { transferId } = started.body;
    const json = 'application/json';
    const probes: Array<[string, Promise<{ status: number; text: string }>]> = [];
    const probe = (name: string, method: string, path: string, options: Parameters<typeof raw>[2] = {}) =>
      probes.push([name, raw(method, `/api/v1${path}`, { key: house, ...options })]);
    for (const body of [
      'null',
      '[]',
      '"123456"',
      '123456',
      '{"transferCode":123456}',
      '{"transferCode":null}',
      '{"transferCode":["123456"]}',
      '{"transferCode":"１２３４５６"}',
      '{"transferCode":"123456\\n"}',
      '{',
      '',
    ]) {
      probe(`confirm body ${body}`, 'POST', `/auction/transfers/${transferId}/confirm`, { body, contentType: json });
    }
    probe('confirm text/plain', 'POST', `/auction/transfers/${transferId}/confirm`, {
      body: '123456',
      contentType: 'text/plain',
    });
    for (const id of ['x'.repeat(5000), '%00', '..%2F..%2Fadmin', '%F0%9F%98%80', '%ZZ', 'trf_%2e%2e', '%C0%AF']) {
      probe(`confirm id ${id.slice(0, 20)}`, 'POST', `/auction/transfers/${id}/confirm`, {
        body: '{"transferCode":"123456"}',
        contentType: json,
      });
      probe(`cancel id ${id.slice(0, 20)}`, 'POST', `/auction/transfers/${id}/cancel`);
      probe(`history ${id.slice(0, 20)}`, 'GET', `/auction/objects/${id}/provenance`);
      probe(`public ${id.slice(0, 20)}`, 'GET', `/auction/public/verify/${id}`);
      probe(`verify ${id.slice(0, 20)}`, 'GET', `/compliance/${id}/verify`);
      probe(`root ${id.slice(0, 20)}`, 'GET', `/compliance/${id}/merkle/root`);
    }
    probe('cancel with bad json', 'POST', `/auction/transfers/${transferId}/cancel`, { body: '{', contentType: json });
    for (const body of [
      `{"objectId":"${object.id}","fromOwnerId":"client-jane","toOwnerId":"b","salePrice":1e308,"saleCurrency":"EUR"}`,
      `{"objectId":"${object.id}","fromOwnerId":"client-jane","toOwnerId":"b","salePrice":5e-324,"saleCurrency":"EUR"}`,
      `{"objectId":"${object.id}","fromOwnerId":"client-jane","toOwnerId":"${'b'.repeat(100_000)}","salePrice":1,"saleCurrency":"EUR"}`,
      `{"objectId":"${object.id}","fromOwnerId":"client-jane","toOwnerId":"b","salePrice":"1","saleCurrency":"EUR"}`,
      `{"objectId":"","fromOwnerId":"client-jane","toOwnerId":"b","salePrice":1,"saleCurrency":"EUR"}`,
      `{"objectId":"${object.id}","fromOwnerId":"client-jane","toOwnerId":"b","salePrice":1,"saleCurrency":"EUR","__proto__":{"x":1}}`,
    ]) {
      probe(`initiate ${body.slice(0, 80)}`, 'POST', '/auction/transfers/initiate', { body, contentType: json });
    }
    for (const query of [
      'limit=0',
      'limit=-1',
      'limit=abc',
      'limit=100000',
      'status=bogus',
      'cursor=%00',
      'cursor=W10',
      'status=sold&status=listed',
      'limit=1e3',
    ]) {
      probe(`dashboard ${query}`, 'GET', `/auction/dashboard/objects?${query}`);
    }
    for (const query of [
      'eventId=',
      'eventId=%00',
      `eventId=${'a'.repeat(3000)}`,
      'eventId=00000000-0000-0000-0000-000000000000',
    ]) {
      probe(`proof ${query.slice(0, 30)}`, 'GET', `/compliance/${object.id}/merkle/proof?${query}`);
    }
    for (const query of [
      'fromSize=0&toSize=1',
      'fromSize=2&toSize=1',
      'fromSize=1&toSize=99999999999999999999',
      'fromSize=-1&toSize=1',
    ]) {
      probe(`consistency ${query}`, 'GET', `/compliance/${object.id}/merkle/consistency?${query}`);
    }
    probe('photo angle array', 'POST', `/auction/objects/${object.id}/photos`, {
      body: '--b\r\nContent-Disposition: form-data; name="angle"\r\n\r\ndial\r\n--b\r\nContent-Disposition: form-data; name="angle"\r\n\r\nmovement\r\n--b--\r\n',
      contentType: 'multipart/form-data; boundary=b',
    });
    probe('photo field is text', 'POST', `/auction/objects/${object.id}/photos`, {
      body: '--b\r\nContent-Disposition: form-data; name="angle"\r\n\r\ndial\r\n--b\r\nContent-Disposition: form-data; name="photo"\r\n\r\nnot a file\r\n--b--\r\n',
      contentType: 'multipart/form-data; boundary=b',
    });
    const answers = await Promise.all(probes.map(async ([name, answer]) => [name, await answer] as const));
    const bad = answers
      .filter(([, answer]) => answer.status < 400 || answer.status >= 500)
      .map(([name, answer]) => `${name}: ${answer.status} ${answer.text.slice(0, 200)}`);
    // Probes that were accepted are listed too: none should be (each is malformed), except the
    // initiates that are valid (1e308 and 5e-324 are finite, ≥ 0) which find a pending transfer: 409.
    expect(bad).toEqual([]);
  });
});

describe('the end of a transfer’s 72 hours', () => {
  it('of a right code and a new transfer racing just after expiry, the buyer is never given the object together with a new open transfer', async () => {
    // docs/AUCTION.md, Transfers: "Expired → 410 GONE (recorded as transfer_expired, which frees the object)".
    for (const round of [1, 2, 3]) {
      const object = await register(`Expiry race ${round}`);
      const first = await initiate(object.id, 'buyer-1');
      expect(first.status).toBe(201);
      t.clock.advance(72 * 3_600_000 + 1_000);
      const [confirmed, second] = await Promise.all([
        confirm(first.body.transferId, first.body.transferCode),
        initiate(object.id, 'buyer-2'),
      ]);
      expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(410);
      expect(second.status, JSON.stringify(second.body)).toBe(201);
      const history = await historyOf(object.id);
      expect(history.chain_of_custody).toHaveLength(1);
      const done = await confirm(second.body.transferId, second.body.transferCode);
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      expect((await historyOf(object.id)).chain_of_custody.at(-1)).toMatchObject({ to: 'buyer-2' });
    }
  });
});

describe('every view of a history tells one story', () => {
  it('after photos, a lock, a cancel, an expiry and a sale: provenance, verify, root, export and the public answer agree', async () => {
    const object = await register('Story lot');
    for (const [i, angle] of ['dial', 'movement'].entries()) {
      expect((await upload(house, object.id, angle, await picture(500 + i, { format: 'png' }))).status).toBe(201);
    }
    // Locked by five wrong codes.
    const locked = await initiate(object.id, 'buyer-1');
    for (let i = 0; i < 5; i += 1) await confirm(locked.body.transferId, wrongOf(locked.body.transferCode, i));
    // Cancelled.
    const cancelled = await initiate(object.id, 'buyer-2');
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(201);
    expect((await cancel(cancelled.body.transferId)).status).toBe(200);
    // Expired, recorded by the next start.
    const expired = await initiate(object.id, 'buyer-3');
    expect(expired.status).toBe(201);
    t.clock.advance(73 * 3_600_000);
    const sold = await initiate(object.id, 'buyer-4');
    expect(sold.status, JSON.stringify(sold.body)).toBe(201);
    expect((await confirm(sold.body.transferId, sold.body.transferCode)).status).toBe(200);

    const history = await historyOf(object.id);
    expect(history.chain_valid).toBe(true);
    const types = history.events.map((event) => event.type);
    const verify = await api('GET', `/compliance/${object.id}/verify`, { key: house });
    expect(verify.body).toMatchObject({ isValid: true, eventCount: types.length });
    const root = await api('GET', `/compliance/${object.service_serial}/merkle/root`, { key: house });
    expect(root.body.treeSize).toBe(types.length);
    const exported = await api('GET', `/compliance/${object.id}/export?format=json`, { key: house });
    expect(exported.status).toBe(200);
    expect(exported.body.events.map((event: Json) => event.type)).toEqual(types);
    expect(exported.body.rootHash ?? exported.body.checkpoint?.rootHash ?? root.body.rootHash).toBe(root.body.rootHash);
    const shown = await api('GET', `/auction/public/verify/${object.service_serial}`);
    expect(shown.body.provenance).toMatchObject({ chain_intact: true, latest_event: 'transferred' });
    expect(shown.body.status).toBe('authentic');
  });
});

describe('a keyed confirm racing the seller’s cancel', () => {
  it('exactly one wins, and a retry of the confirm with its key is answered what really happened', async () => {
    // docs/AUCTION.md, Transfers: of a cancel and a right code sent together exactly one wins; a keyed
    // confirm's retry is answered its own sale only if it made one ("only a retry carrying the right
    // code is answered it"); after a cancel "the code completes nothing from then on".
    for (const round of [1, 2, 3, 4]) {
      const object = await register(`Keyed cancel race ${round}`);
      const { transferId, transferCode } = (await initiate(object.id)).body;
      const headers = { 'idempotency-key': `keyed-confirm-${round}-${Math.random()}` };
      const [confirmed, cancelled] = await Promise.all([confirm(transferId, transferCode, house, headers), cancel(transferId)]);
      expect([confirmed.status, cancelled.status].sort(), JSON.stringify([confirmed.body, cancelled.body])).toEqual([200, 409]);
      const retried = await confirm(transferId, transferCode, house, headers);
      const sold = confirmed.status === 200;
      expect(retried.status, JSON.stringify(retried.body)).toBe(sold ? 200 : 409);
      const types = (await historyOf(object.id)).events.map((event) => event.type);
      expect(types).toEqual(
        sold
          ? ['registered', 'transfer_initiated', 'sold', 'transferred']
          : ['registered', 'transfer_initiated', 'transfer_cancelled'],
      );
      // Another tenant cannot touch it either way.
      expectError(await confirm(transferId, transferCode, rival), 404, 'NOT_FOUND');
      expectError(await cancel(transferId, rival), 404, 'NOT_FOUND');
    }
  });
});
