import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { generateEd25519KeyPair } from '@hallmark/crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earlyInWindow } from '../support/client-address.ts';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { type ApiResponse, call, type EmbeddedRunningProduct, startEmbeddedProduct } from '../support/embedded.ts';
import { ownerOfKey, publicKeyRegistration } from '../support/public-keys.ts';
import { startServiceProcess } from '../support/service-process.ts';
import { waitFor } from '../support/wait.ts';

// The gateway as an outsider meets it (issue #16, "the edge"): client addresses behind proxies,
// a forged Host header, response headers, the distributed form's master key, and whether an id
// tells another tenant that it exists. In both forms: the embedded one runs three products, the
// distributed one three gateways, each configured as below, in front of one set of services.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

/** A gateway as these tests meet it: an embedded product, or one gateway process of the distributed form. */
interface Gateway {
  url: string;
  operatorKey: string;
  /** The gateway's log lines so far, parsed. */
  logLines(): Json[];
}

/** Defaults but a per-address limit too high for these tests to reach. */
let t: Gateway;
/** Trust in X-Forwarded-For off (the default); a low per-address limit on the keyless routes. */
let limited: Gateway;
/** Behind one proxy (HALLMARK_TRUST_PROXY=1), with its public address configured. */
let proxied: Gateway;
let operator: string;
const publicLimit = 5;
const configuredPublicUrl = 'https://id.hallmark.test';
const resolverUrl = 'https://scan.hallmark.test';

/** The settings of t, limited and proxied. */
const gatewaySettings: Array<Record<string, string>> = [
  { HALLMARK_PUBLIC_RATE_LIMIT: '1000' },
  { HALLMARK_PUBLIC_RATE_LIMIT: String(publicLimit), HALLMARK_RESOLVER_URL: resolverUrl },
  {
    HALLMARK_PUBLIC_RATE_LIMIT: String(publicLimit),
    HALLMARK_TRUST_PROXY: '1',
    HALLMARK_PUBLIC_URL: configuredPublicUrl,
    // The request log is at info (the distributed harness logs warnings only).
    HALLMARK_LOG_LEVEL: 'info',
  },
];

/** Three embedded products, one per setting. */
async function startEmbeddedGateways(): Promise<{ gateways: Gateway[]; stop(): Promise<void> }> {
  const products: EmbeddedRunningProduct[] = [];
  const stop = async () => {
    for (const product of products) await product.stop();
  };
  try {
    for (const settings of gatewaySettings) products.push(await startEmbeddedProduct(settings));
  } catch (error) {
    await stop();
    throw error;
  }
  const gateways = products.map((product) => ({
    url: product.url,
    operatorKey: product.operatorKey,
    logLines: () => product.test.logLines.map((text) => JSON.parse(text) as Json),
  }));
  return { gateways, stop };
}

/** One distributed product with three gateways, one per setting; the limits' counters are shared in Redis. */
async function startDistributedGateways(): Promise<{ gateways: Gateway[]; stop(): Promise<void> }> {
  const product: DistributedProduct = await startDistributedProduct({}, { gatewayEnv: gatewaySettings });
  const gateways = product.gatewayUrls.map((url, index) => ({
    url,
    operatorKey: product.operatorKey,
    logLines: () => product.process(`gateway-${index + 1}`).lines as Json[],
  }));
  return { gateways, stop: () => product.stop() };
}

const api = (product: Gateway, method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(product.url, method, `/api/v1${path}`, options);

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A request with headers fetch would not send as given (Host), straight over a socket to the product. */
function raw(product: Gateway, method: string, path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const port = Number(new URL(product.url).port);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/**
 * A body over the limit, announced whole by Content-Length but only begun: the product answers 413
 * from the length alone and closes, so a client still writing the rest would meet EPIPE (fetch fails
 * then, whatever the answer was). The answer is read, and the request dropped after it.
 */
function rawTooLarge(product: Gateway, path: string, headers: Record<string, string>, body: string): Promise<RawResponse> {
  const port = Number(new URL(product.url).port);
  return new Promise((resolve, reject) => {
    let answered = false;
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (response) => {
        answered = true;
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') });
          outgoing.destroy();
        });
        response.on('error', reject);
      },
    );
    outgoing.on('error', (error) => {
      if (!answered) reject(error);
    });
    outgoing.write(body.slice(0, 64 * 1024));
  });
}

/** A made-up id of the same form as `id`: each of its last eight letters or digits replaced by another of its kind. */
function lookalike(id: string): string {
  const pick = (alphabet: string) => alphabet[randomInt(alphabet.length)] as string;
  const chars = [...id];
  for (let index = Math.max(0, chars.length - 8); index < chars.length; index++) {
    const char = chars[index] as string;
    if (/[0-9]/.test(char)) chars[index] = pick('0123456789');
    else if (/[a-f]/.test(char)) chars[index] = pick('abcdef');
    else if (/[g-z]/.test(char)) chars[index] = pick('ghijklmnopqrstuvwxyz');
    else if (/[A-Z]/.test(char)) chars[index] = pick('ABCDEFGHIJKLMNOPQRSTUVWXYZ');
  }
  const made = chars.join('');
  return made === id ? lookalike(id) : made;
}

/** What an answer tells its reader: status, code, message and details, with the id asked for blanked out. */
function disclosed(response: ApiResponse, id: string) {
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    error: JSON.parse(JSON.stringify(response.body.error ?? null).replaceAll(id, '<id>')),
    fields: Object.keys(response.body).sort(),
  };
}

/**
 * Asks about another tenant's id and about an id nobody has, the same way, and expects the same
 * answer (a 404, not a 403 or a 409 that would confirm the other tenant's id exists).
 */
async function expectSameAsUnknown(
  ask: (id: string) => Promise<ApiResponse>,
  othersId: string,
  unknownId = lookalike(othersId),
): Promise<void> {
  const others = await ask(othersId);
  const unknown = await ask(unknownId);
  expect(disclosed(others, othersId), `${othersId}: ${JSON.stringify(others.body)}`).toEqual(disclosed(unknown, unknownId));
  expect(others.status).toBe(404);
  expect(others.body.error?.code).toBe('NOT_FOUND');
}

async function newTenant(product: Gateway, name: string): Promise<{ accountId: string; key: string; keyId: string }> {
  const created = await api(product, 'POST', '/accounts', {
    key: product.operatorKey,
    body: { name: `${name} ${randomUUID().slice(0, 8)}`, tier: 'enterprise' },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { accountId: created.body.account.id, key: created.body.apiKey.secret, keyId: created.body.apiKey.id };
}

/** A signed code made with the operator key (the operator may sign any GTIN no tenant owns). */
async function operatorCode(product: Gateway): Promise<string> {
  const generated = await api(product, 'POST', '/code/generate', {
    key: product.operatorKey,
    body: { gtin: '09506000134352', serialNumber: `EDGE-${randomUUID().slice(0, 8)}`, metadata: { name: 'Edge test' } },
  });
  expect(generated.status, JSON.stringify(generated.body)).toBe(201);
  return generated.body.url as string;
}

const pathOf = (link: string) => {
  const url = new URL(link);
  return `${url.pathname}${url.search}`;
};

describe.each([
  ['embedded', startEmbeddedGateways],
  ['distributed', startDistributedGateways],
])('the edge (%s form)', (_form, start) => {
  let stopGateways: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const started = await start();
    stopGateways = started.stop;
    [t, limited, proxied] = started.gateways as [Gateway, Gateway, Gateway];
    operator = t.operatorKey;
  });

  afterAll(async () => {
    await stopGateways?.();
  });

  describe('client addresses behind proxies (HALLMARK_TRUST_PROXY)', () => {
    // Enough requests to exceed the limit even if they straddle three one-second windows.
    const burst = publicLimit * 3 + 5;
    const hammer = (product: Gateway, forwardedFor: (index: number) => string) =>
      Promise.all(
        Array.from({ length: burst }, (_, index) =>
          fetch(`${product.url}/api/v1/auction/public/verify/HM-EDGE0-EDGE0-EDGE0`, {
            headers: { 'x-forwarded-for': forwardedFor(index) },
          }).then(async (response) => {
            await response.arrayBuffer();
            return response.status;
          }),
        ),
      );

    /**
     * The burst from one client address, sent early in a clock second, with the refusals it is owed:
     * the limit counts per fixed clock second, so each second the burst spanned lets publicLimit
     * through. Sent again (in a later second: fresh counts) when it spanned more than three.
     */
    async function limitedBurst(product: Gateway, forwardedFor: (index: number) => string) {
      for (let attempt = 1; ; attempt++) {
        const first = await earlyInWindow(1_000, 1_000, 5);
        const statuses = await hammer(product, forwardedFor);
        const spanned = Math.floor(Date.now() / 1_000) - first + 1;
        if (spanned <= 3) return { statuses, owed: burst - spanned * publicLimit };
        if (attempt === 5) throw new Error(`five bursts in a row spanned more than 3 s (the last ${spanned} s)`);
      }
    }

    it('off (the default): a forged X-Forwarded-For does not buy a new bucket on the public routes', async () => {
      const { statuses, owed } = await limitedBurst(limited, (index) => `198.51.100.${index + 1}`);
      expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(owed);
      expect(statuses.filter((status) => status !== 429).every((status) => status === 404)).toBe(true);
    });

    it('one hop: each forwarded client address has its own bucket, and one address is still limited', async () => {
      const distinct = await hammer(proxied, (index) => `203.0.113.${index + 1}`);
      // None is limited (each is its own bucket); a loaded machine may answer one 503 instead of the 404.
      expect(distinct.filter((status) => status === 429)).toEqual([]);
      expect(distinct.filter((status) => status === 404).length).toBeGreaterThanOrEqual(burst - 2);
      // The proxy appends the address it saw; what the client wrote before it is not trusted.
      const oneClient = await limitedBurst(proxied, (index) => `10.9.${index}.1, 192.0.2.77`);
      expect(oneClient.statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(oneClient.owed);
    });

    it('one hop: an address the proxy wrote with a port is that address, and a value that is no address is the proxy: no fresh bucket either way', async () => {
      const ported = await limitedBurst(proxied, (index) => `198.51.100.60:${1_000 + index}`);
      expect(ported.statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(ported.owed);
      const odd = await limitedBurst(proxied, (index) => (index % 2 === 0 ? `unknown-${index}` : `garbage:${index}`));
      expect(odd.statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(odd.owed);
    });

    it('one hop: the addresses and /64s of one IPv6 /48 are one client to the risk rules, so rotating through them fakes no cloned label', async () => {
      const scanFrom = async (url: string, address: string) =>
        (
          await api(proxied, 'POST', '/code/verify', {
            key: proxied.operatorKey,
            body: { url },
            headers: { 'x-forwarded-for': address },
          })
        ).body;
      // Twelve scans of a genuine code, each from another address of 2001:db8:99:1::/64: one client.
      const rotated = await operatorCode(proxied);
      for (let index = 1; index <= 11; index++) await scanFrom(rotated, `2001:db8:99:1::${index.toString(16)}`);
      const last = await scanFrom(rotated, '2001:db8:99:1:ffff::1');
      expect(last).toMatchObject({ verdict: 'AUTHENTIC' });
      // Twelve scans from twelve /64s of one /48 (a tunnel broker hands out /48s for free): one client
      // too. Before 2026-12-05 each /64 was a client, and these twelve made the code SUSPICIOUS.
      const subnets = await operatorCode(proxied);
      for (let index = 1; index <= 11; index++) await scanFrom(subnets, `2001:db8:9a:${index.toString(16)}::1`);
      expect(await scanFrom(subnets, '2001:db8:9a:ff::1')).toMatchObject({ verdict: 'AUTHENTIC', riskIndicators: [] });
      // Twelve scans from twelve /48s are twelve clients: the cloned-label rule fires (10 within 10 minutes).
      const cloned = await operatorCode(proxied);
      for (let index = 1; index <= 11; index++) await scanFrom(cloned, `2001:db8:${(0xa0 + index).toString(16)}::1`);
      expect(await scanFrom(cloned, '2001:db8:ff::1')).toMatchObject({
        verdict: 'SUSPICIOUS',
        riskIndicators: expect.arrayContaining(['KNOWN_COUNTERFEIT_PATTERN']),
      });
    });

    it('one hop: a page reload from another address of the same /64, or the same IPv4 address written another way, counts no scan', async () => {
      const code = await operatorCode(proxied);
      const view = async (address: string) => {
        const response = await fetch(`${proxied.url}/verify${pathOf(code)}`, {
          headers: { accept: 'application/json', 'x-forwarded-for': address },
        });
        const body = (await response.json()) as Json;
        expect(response.status, JSON.stringify(body)).toBe(200);
        return body.metadata.totalScans as number;
      };
      // Under the per-/64 limit (5 a second): before, each address of the /64 counted a scan of its own.
      const rotated = [];
      for (const address of ['2001:db8:5:5::2', '2001:db8:5:5::3', '2001:db8:5:5:ffff::9']) rotated.push(await view(address));
      expect(rotated).toEqual([1, 1, 1]);
      const mapped = [];
      for (const address of ['198.51.100.7', '::ffff:198.51.100.7', '::ffff:c633:6407']) mapped.push(await view(address));
      expect(mapped).toEqual([2, 2, 2]);
    });

    it('one hop: another site’s image, frame, script, fetch or prefetch of a genuine code’s page is refused and counts no scan, so its visitors’ browsers fake no cloned label', async () => {
      const view = (link: string, address: string, headers: Record<string, string>) =>
        fetch(`${proxied.url}/verify${pathOf(link)}`, { headers: { 'x-forwarded-for': address, ...headers } });
      const code = await operatorCode(proxied);
      // Twelve visitors of another site, each from a network of their own: the page embeds the link.
      const embeds: Array<Record<string, string>> = [
        { 'sec-fetch-dest': 'image', 'sec-fetch-mode': 'no-cors', 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-dest': 'iframe', 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-dest': 'script', 'sec-fetch-mode': 'no-cors', 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-dest': 'empty', 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'cross-site', accept: 'application/json' },
        { 'sec-fetch-dest': 'document', 'sec-purpose': 'prefetch', 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-dest': 'empty', purpose: 'prefetch', 'sec-fetch-site': 'cross-site' },
      ];
      for (let index = 0; index < 12; index++) {
        const headers = embeds[index % embeds.length] ?? {};
        const response = await view(code, `198.${51 + index}.100.120`, headers);
        const body = await response.text();
        expect(response.status, `${JSON.stringify(headers)}: ${body.slice(0, 200)}`).toBe(403);
        if (headers.accept === 'application/json') expect(JSON.parse(body).error.code).toBe('EMBEDDED_LOAD_REFUSED');
        else expect(body).toContain('Open this link to check the product');
      }
      // The shopper who opens the link (a phone after the scan: a top-level navigation) makes its first scan.
      const opened = await view(code, '198.51.100.140', {
        'sec-fetch-dest': 'document',
        'sec-fetch-mode': 'navigate',
        'sec-fetch-site': 'none',
        accept: 'application/json',
      });
      const first = (await opened.json()) as Json;
      expect(opened.status, JSON.stringify(first)).toBe(200);
      expect(first).toMatchObject({ verdict: 'AUTHENTIC', metadata: { totalScans: 1 } });

      // The same twelve loads counted as views (no fetch metadata, as before), from twelve networks: the cloned-label rule fires.
      const counted = await operatorCode(proxied);
      let last: Json = {};
      for (let index = 0; index < 12; index++) {
        const response = await view(counted, `198.${51 + index}.100.160`, { accept: 'application/json' });
        last = (await response.json()) as Json;
        expect(response.status, JSON.stringify(last)).toBe(200);
      }
      expect(last).toMatchObject({
        verdict: 'SUSPICIOUS',
        riskIndicators: expect.arrayContaining(['KNOWN_COUNTERFEIT_PATTERN']),
      });
    });

    it('one hop: the addresses of one IPv6 /64 share a bucket, so rotating through them buys none; another /64 has its own', async () => {
      // A holder of 2001:db8:77:1::/64 sends each request from another of its addresses, written every way.
      const spellings = (index: number) =>
        [`2001:db8:77:1::${index + 1}`, `2001:0db8:0077:0001:0:0:0:${(index + 1).toString(16)}`, `2001:db8:77:1:${index + 1}::1`][
          index % 3
        ] as string;
      const rotating = await limitedBurst(proxied, spellings);
      expect(rotating.statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(rotating.owed);
      // One request from each of as many /64s: none is limited.
      const blocks = await hammer(proxied, (index) => `2001:db8:78:${index + 1}::1`);
      expect(blocks.filter((status) => status === 429)).toEqual([]);
      // An IPv4 address written as IPv6 is that IPv4 address: the two spellings share its bucket.
      const mapped = await limitedBurst(proxied, (index) => (index % 2 === 0 ? '198.51.100.201' : '::ffff:198.51.100.201'));
      expect(mapped.statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(mapped.owed);
    });

    it('one hop: the request log names the forwarded client, not the proxy', async () => {
      const requestId = `edge-${randomUUID().slice(0, 8)}`;
      await fetch(`${proxied.url}/health`, { headers: { 'x-forwarded-for': '192.0.2.44', 'x-request-id': requestId } });
      const line = await waitFor('the request line', async () =>
        proxied.logLines().find((entry) => entry.requestId === requestId && entry.msg === 'request'),
      );
      expect(line.client).toBe('192.0.2.44');
    });
  });

  describe('the public base URL comes from configuration, never from the Host header', () => {
    const forged = {
      host: 'evil.example',
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'gopher',
      forwarded: 'host=evil.example;proto=https',
    };

    async function answers(product: Gateway): Promise<Array<{ what: string; response: RawResponse }>> {
      const link = pathOf(await operatorCode(product));
      const asked: Array<[string, string, string, Record<string, string>]> = [
        ['page', 'GET', link, {}],
        ['page (HEAD)', 'HEAD', link, {}],
        ['JSON', 'GET', link, { accept: 'application/json' }],
        ['linkset', 'GET', `${link}${link.includes('?') ? '&' : '?'}linkType=linkset`, {}],
        ['linkset by Accept', 'GET', link, { accept: 'application/linkset+json' }],
        ['a bad link', 'GET', '/01/123', {}],
        ['preflight', 'OPTIONS', link, { origin: 'https://shop.example', 'access-control-request-method': 'GET' }],
        ['resolver description', 'GET', '/.well-known/gs1resolver', {}],
        ['unknown path', 'GET', '/nowhere', {}],
        ['OpenAPI', 'GET', '/api/v1/openapi.json', {}],
      ];
      const out: Array<{ what: string; response: RawResponse }> = [];
      for (const [index, [what, method, path, headers]] of asked.entries()) {
        // Behind the proxy each request comes from another client, so none meets the per-address limit.
        const client = { 'x-forwarded-for': `198.51.100.${index + 1}` };
        const response = await raw(product, method, path, { ...forged, ...client, ...headers });
        expect(response.status, what).not.toBe(429);
        expect(response.status, what).toBeLessThan(500);
        out.push({ what, response });
      }
      return out;
    }

    it('default: absolute links use the address the product listens on', async () => {
      for (const { what, response } of await answers(t)) {
        expect(JSON.stringify(response.headers), what).not.toContain('evil.example');
        expect(response.body, what).not.toContain('evil.example');
        expect(response.body, what).not.toContain('gopher');
      }
      const description = await raw(t, 'GET', '/.well-known/gs1resolver', forged);
      // The port it listens on, as http://localhost:<port> (docs/INTERFACE.md); the distributed harness reaches it at 127.0.0.1.
      const listening = new URL(t.url);
      listening.hostname = 'localhost';
      expect(JSON.parse(description.body).resolverRoot).toBe(listening.origin);
    });

    it('without HALLMARK_PUBLIC_URL, HALLMARK_RESOLVER_URL (where generated links point) is the public URL', async () => {
      const description = await raw(limited, 'GET', '/.well-known/gs1resolver', forged);
      expect(description.status).toBe(200);
      expect(JSON.parse(description.body).resolverRoot).toBe(resolverUrl);
    });

    it('HALLMARK_PUBLIC_URL: links, linksets and the description use it, also when proxies are trusted', async () => {
      const all = await answers(proxied);
      for (const { what, response } of all) {
        expect(JSON.stringify(response.headers), what).not.toContain('evil.example');
        expect(response.body, what).not.toContain('evil.example');
      }
      const page = all.find((entry) => entry.what === 'page')?.response as RawResponse;
      expect(page.headers.link).toMatch(new RegExp(`^<${configuredPublicUrl}/01/`));
      const linkset = JSON.parse(all.find((entry) => entry.what === 'linkset')?.response.body as string);
      expect(linkset.linkset[0].anchor).toMatch(new RegExp(`^${configuredPublicUrl}/01/`));
      const description = JSON.parse(all.find((entry) => entry.what === 'resolver description')?.response.body as string);
      expect(description.resolverRoot).toBe(configuredPublicUrl);
    });
  });

  describe('response headers', () => {
    it('X-Content-Type-Options: nosniff on every answer: JSON, HTML, images, errors, 404s', async () => {
      const link = pathOf(await operatorCode(t));
      const sample: Array<[string, string, string, Record<string, string>?, string?]> = [
        ['health', 'GET', '/health'],
        ['OpenAPI', 'GET', '/api/v1/openapi.json'],
        ['JWKS', 'GET', '/.well-known/jwks.json'],
        ['resolver page', 'GET', link],
        ['resolver HEAD', 'HEAD', link],
        [
          'QR image',
          'GET',
          `/api/v1/code/qr?url=${encodeURIComponent(`http://localhost${link}`)}&format=png`,
          { 'x-api-key': operator },
        ],
        ['no key', 'GET', '/api/v1/keys'],
        ['unknown key', 'GET', '/api/v1/keys', { 'x-api-key': `svc_live_${'0'.repeat(64)}` }],
        ['unknown path', 'GET', '/api/v1/nowhere'],
        ['unknown schema', 'GET', '/api/v1/schemas/sch_nowhere', { 'x-api-key': operator }],
        ['bad JSON', 'POST', '/api/v1/code/verify', { 'x-api-key': operator, 'content-type': 'application/json' }, '{"url":'],
        ['bad media type', 'POST', '/api/v1/code/verify', { 'x-api-key': operator, 'content-type': 'text/plain' }, 'hello'],
        ['validation error', 'POST', '/api/v1/code/verify', { 'x-api-key': operator, 'content-type': 'application/json' }, '{}'],
        [
          'too large',
          'POST',
          '/api/v1/code/verify',
          { 'x-api-key': operator, 'content-type': 'application/json' },
          `{"url":"${'x'.repeat(2 * 1024 * 1024)}"}`,
        ],
      ];
      for (const [what, method, path, headers = {}, body] of sample) {
        if (what === 'too large') {
          const response = await rawTooLarge(t, path, headers, body ?? '');
          expect(response.status, what).toBe(413);
          expect(response.headers['x-content-type-options'], `${what}: ${response.status}`).toBe('nosniff');
          continue;
        }
        const response = await fetch(`${t.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
        await response.arrayBuffer();
        expect(response.headers.get('x-content-type-options'), `${what}: ${response.status}`).toBe('nosniff');
      }
    });

    it('Cache-Control: no-store on every answer to a request with an API key, whatever the route set', async () => {
      const link = await operatorCode(t);
      const sample: Array<[string, string, string, unknown?]> = [
        ['keys', 'GET', '/api/v1/keys'],
        ['verify', 'POST', '/api/v1/code/verify', { url: link }],
        ['QR image (public caching otherwise)', 'GET', `/api/v1/code/qr?url=${encodeURIComponent(link)}&format=svg`],
        ['JWKS with a key', 'GET', '/.well-known/jwks.json'],
        ['not found', 'GET', '/api/v1/schemas/sch_nowhere'],
        ['validation error', 'POST', '/api/v1/code/verify', {}],
        ['unknown path', 'GET', '/api/v1/nowhere'],
        ['compliance config', 'GET', '/api/v1/compliance/config'],
      ];
      for (const [what, method, path, body] of sample) {
        for (const key of [operator, `svc_live_${'0'.repeat(64)}`]) {
          const response = await fetch(`${t.url}${path}`, {
            method,
            headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
          await response.arrayBuffer();
          // no-store, or what the route set when it already forbids storing (e.g. "private, no-store").
          expect(response.headers.get('cache-control'), `${what} (${response.status})`).toMatch(/(^|[ ,])no-store($|[ ,])/);
        }
      }
      // Without a key, a public answer keeps its own caching.
      const jwks = await fetch(`${t.url}/.well-known/jwks.json`);
      await jwks.arrayBuffer();
      expect(jwks.headers.get('cache-control')).toBe('public, max-age=300');
    });
  });

  describe('another tenant’s ids answer exactly like ids nobody has', () => {
    let owner: { accountId: string; key: string; keyId: string };
    let outsider: { accountId: string; key: string; keyId: string };

    beforeAll(async () => {
      owner = await newTenant(t, 'Owner');
      outsider = await newTenant(t, 'Outsider');
    });

    it('metadata schemas: read, versions, update, delete, validate', async () => {
      const created = await api(t, 'POST', '/schemas', { key: owner.key, body: { copyFrom: 'tpl_luxury_goods' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.id as string;
      const as = (method: string, path: string, body?: unknown) => (schemaId: string) =>
        api(t, method, path.replace('{id}', schemaId), { key: outsider.key, ...(body === undefined ? {} : { body }) });
      await expectSameAsUnknown(as('GET', '/schemas/{id}'), id);
      await expectSameAsUnknown(as('GET', '/schemas/{id}?version=1'), id);
      await expectSameAsUnknown(as('PATCH', '/schemas/{id}', { name: 'Taken over' }), id);
      await expectSameAsUnknown(as('POST', '/schemas/{id}/validate', { name: 'x' }), id);
      await expectSameAsUnknown(as('DELETE', '/schemas/{id}'), id);
      // And nothing happened to it.
      const still = await api(t, 'GET', `/schemas/${id}`, { key: owner.key });
      expect(still.status).toBe(200);
      expect(still.body.version).toBe(1);
    });

    it('auction: photos, provenance (by id and serial), transfers', async () => {
      const registered = await api(t, 'POST', '/auction/objects/register', {
        key: owner.key,
        body: { title: 'Speedmaster 105.012', category: 'watch', ownerId: 'client-ann' },
      });
      expect(registered.status, JSON.stringify(registered.body)).toBe(201);
      const objectId = registered.body.object.id as string;
      const serial = registered.body.object.service_serial as string;
      const started = await api(t, 'POST', '/auction/transfers/initiate', {
        key: owner.key,
        body: { objectId, fromOwnerId: 'client-ann', toOwnerId: 'buyer-bob', salePrice: 1000, saleCurrency: 'EUR' },
      });
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      const outsiderCall = (method: string, path: string, body?: unknown) =>
        api(t, method, path, { key: outsider.key, ...(body === undefined ? {} : { body }) });

      await expectSameAsUnknown(async (id) => {
        const form = new FormData();
        form.append('angle', 'dial');
        form.append('photo', new Blob([Buffer.from('not really a photo')], { type: 'image/png' }), 'dial.png');
        const response = await fetch(`${t.url}/api/v1/auction/objects/${id}/photos`, {
          method: 'POST',
          headers: { 'x-api-key': outsider.key },
          body: form,
        });
        const text = await response.text();
        return { status: response.status, headers: response.headers, body: JSON.parse(text) };
      }, objectId);
      for (const idOrSerial of [objectId, serial]) {
        await expectSameAsUnknown((id) => outsiderCall('GET', `/auction/objects/${id}/provenance`), idOrSerial);
        await expectSameAsUnknown(
          (id) =>
            outsiderCall('POST', '/auction/provenance/events', { objectId: id, eventType: 'listed', actorRole: 'auction_house' }),
          idOrSerial,
        );
      }
      await expectSameAsUnknown(
        (id) =>
          outsiderCall('POST', '/auction/transfers/initiate', {
            objectId: id,
            fromOwnerId: 'client-ann',
            toOwnerId: 'buyer-eve',
            salePrice: 1,
            saleCurrency: 'EUR',
          }),
        objectId,
      );
      await expectSameAsUnknown(
        (id) => outsiderCall('POST', `/auction/transfers/${id}/confirm`, { transferCode: started.body.transferCode }),
        started.body.transferId,
      );
      // The owner's transfer is untouched: the outsider's guess did not cost it an attempt.
      const confirmed = await api(t, 'POST', `/auction/transfers/${started.body.transferId}/confirm`, {
        key: owner.key,
        body: { transferCode: started.body.transferCode },
      });
      expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    });

    it('compliance: chain check, Merkle root, proof, consistency, export', async () => {
      const registered = await api(t, 'POST', '/auction/objects/register', {
        key: owner.key,
        body: { title: 'Pollock study', category: 'painting', ownerId: 'client-ann' },
      });
      expect(registered.status, JSON.stringify(registered.body)).toBe(201);
      const assetId = registered.body.object.id as string;
      const listed = await api(t, 'POST', '/auction/provenance/events', {
        key: owner.key,
        body: { objectId: assetId, eventType: 'listed', actorRole: 'auction_house' },
      });
      expect(listed.status, JSON.stringify(listed.body)).toBe(201);
      const eventId = listed.body.eventId as string;
      // The owner sees the whole history first, so the outsider asks about an asset that is there.
      await waitFor('the owner’s Merkle proof', async () => {
        const proof = await api(t, 'GET', `/compliance/${assetId}/merkle/proof?eventId=${eventId}`, { key: owner.key });
        return proof.status === 200 ? proof : undefined;
      });
      const outsiderGet = (path: string) => (id: string) => api(t, 'GET', path.replace('{id}', id), { key: outsider.key });
      await expectSameAsUnknown(outsiderGet('/compliance/{id}/verify'), assetId);
      await expectSameAsUnknown(outsiderGet('/compliance/{id}/merkle/root'), assetId);
      await expectSameAsUnknown(outsiderGet(`/compliance/{id}/merkle/proof?eventId=${eventId}`), assetId);
      await expectSameAsUnknown(outsiderGet('/compliance/{id}/merkle/consistency?from=1'), assetId);
      await expectSameAsUnknown(outsiderGet('/compliance/{id}/export?format=json'), assetId);
    });

    it('keys: revoking another tenant’s API key, public key or signing key', async () => {
      const publicKey = await api(t, 'POST', '/keys', {
        key: owner.key,
        body: publicKeyRegistration(generateEd25519KeyPair(), await ownerOfKey(t.url, owner.key)),
      });
      expect(publicKey.status, JSON.stringify(publicKey.body)).toBe(201);
      const signing = await api(t, 'POST', '/keys/signing/rotate', { key: owner.key });
      expect(signing.status, JSON.stringify(signing.body)).toBe(201);
      const revoke = (id: string) => api(t, 'POST', `/keys/${id}/revoke`, { key: outsider.key });
      await expectSameAsUnknown(revoke, owner.keyId);
      await expectSameAsUnknown(revoke, publicKey.body.id);
      await expectSameAsUnknown(revoke, signing.body.id);
      // The owner's key still works.
      expect((await api(t, 'GET', '/keys', { key: owner.key })).status).toBe(200);
    });
  });
});

describe('the distributed form refuses a weak master key', () => {
  const base = {
    HALLMARK_NATS_URL: 'nats://127.0.0.1:4222',
    HALLMARK_DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/hallmark_edge_never_created',
    HALLMARK_REDIS_URL: 'redis://127.0.0.1:6379',
    HALLMARK_NAMESPACE: `edge_${randomUUID().slice(0, 8)}`,
    // Every other setting valid, so the master key is what stops the process.
    HALLMARK_BUS_SECRET: randomBytes(32).toString('hex'),
  };

  const refused = async (service: string, masterKey: string) => {
    const started = startServiceProcess(service, { ...base, HALLMARK_MASTER_KEY: masterKey }, `${service}-weak-key`);
    const code = await started.exited;
    const stderr = started.stderr.join('');
    expect(code, `${service}: ${stderr}`).toBe(78);
    expect(stderr).toContain('HALLMARK_MASTER_KEY');
    expect(stderr).toContain('HALLMARK_ENVIRONMENT');
  };

  it('all zero: code-, auction- and compliance-service exit 78, naming HALLMARK_MASTER_KEY', async () => {
    for (const service of ['code-service', 'auction-service', 'compliance-service']) await refused(service, '0'.repeat(64));
  });

  it('one byte repeated, in hex or base64: exit 78', async () => {
    await refused('code-service', 'ab'.repeat(32));
    await refused('code-service', Buffer.alloc(32, 7).toString('base64'));
  });

  it('HALLMARK_ENVIRONMENT=test lets one through (the process goes on, to fail on the missing database)', async () => {
    const started = startServiceProcess(
      'code-service',
      { ...base, HALLMARK_MASTER_KEY: '0'.repeat(64), HALLMARK_ENVIRONMENT: 'test' },
      'code-service-test-environment',
    );
    expect(await started.exited).toBe(1);
    expect(started.stderr.join('')).not.toContain('HALLMARK_MASTER_KEY');
    expect(started.lines.some((line) => line.msg === 'could not start')).toBe(true);
  });
});
