// Issue #22, items 2 and 4: the TypeScript SDK (@hallmark/sdk) against the embedded product over real
// HTTP, through a proxy on 127.0.0.1 that can fail on purpose. Every answer the SDK receives is
// matched to its operation by method and path (independently of the SDK) and checked against that
// operation's response schema in the OpenAPI document the gateway serves; the operations exercised
// must cover every operationId but the short exclusion list below.
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateEd25519KeyPair } from '@hallmark/crypto';
import {
  APIConnectionError,
  APIError,
  ConflictError,
  CsrfRejectedError,
  DuplicateSerialError,
  EmbeddedLoadRefusedError,
  ExpiredApiKeyError,
  errorClasses,
  errorStatus,
  GoneError,
  GtinClaimNotAllowedError,
  GtinNotOwnedError,
  Hallmark,
  IdempotencyKeyReusedError,
  InsufficientScopeError,
  InvalidApiKeyError,
  InvalidGtinError,
  InvalidUrlError,
  KeyNotFoundError,
  KeyRestrictedError,
  MethodNotAllowedError,
  MissingApiKeyError,
  MissingRequiredFieldError,
  MissingSignatureError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  RequestHeadersTooLargeError,
  RequestTimeoutError,
  RevokedApiKeyError,
  ServiceUnavailableError,
  UnsupportedMediaTypeError,
  ValidationError,
  verifyWebhook,
} from '@hallmark/sdk';
import { auditExport, verifyOffline } from '@hallmark/sdk/offline';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { earlyInWindow } from '../support/client-address.ts';
import { startTestProduct, type TestProduct } from '../support/embedded.ts';
import { picture } from '../support/pictures.ts';
import { publicKeyRegistration } from '../support/public-keys.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document and answers are read as untyped JSON
type Json = Record<string, any>;

/**
 * Operations this suite does not call, each with its reason. Kept short: everything else is called
 * through the SDK and its answer checked against the document.
 */
const notExercised: Readonly<Record<string, string>> = {};

const gtin = '09506000134352';
const otherGtin = '09506000134369';
const requestTimeoutMs = 1_500;

let t: TestProduct;
let proxy: Server;
let proxyUrl: string;
let document: Json;
let hallmark: Hallmark;
let houseKey: string;
let accountId: string;
let operator: Hallmark;

// ---------------------------------------------------------------------------------------------
// The proxy: forwards to the gateway; `fault` decides per request whether it fails on purpose.
// ---------------------------------------------------------------------------------------------

interface Forwarded {
  method: string;
  path: string;
  at: number;
  status: number;
  idempotencyKey: string | undefined;
}

type Fault = 'pass' | 'fail-before' | 'fail-after';
let fault: (request: IncomingMessage) => Fault = () => 'pass';
const forwarded: Forwarded[] = [];

function failOnPurpose(response: ServerResponse) {
  response.writeHead(503, { 'content-type': 'application/json', 'x-test-proxy-fault': '1' });
  response.end(
    JSON.stringify({
      error: { code: 'SERVICE_UNAVAILABLE', message: 'The test proxy fails this one on purpose.' },
      meta: { requestId: 'proxy', timestamp: new Date().toISOString() },
    }),
  );
}

function proxyRequest(request: IncomingMessage, response: ServerResponse) {
  const decision = fault(request);
  const entry: Forwarded = {
    method: request.method ?? '',
    path: request.url ?? '',
    at: Date.now(),
    status: 0,
    idempotencyKey: request.headers['idempotency-key'] as string | undefined,
  };
  forwarded.push(entry);
  if (decision === 'fail-before') {
    entry.status = 503;
    request.resume();
    return failOnPurpose(response);
  }
  const target = new URL(t.url);
  const upstream = httpRequest(
    { host: target.hostname, port: target.port, method: request.method, path: request.url, headers: request.headers },
    (answer) => {
      entry.status = answer.statusCode ?? 0;
      if (decision === 'fail-after') {
        // The gateway did the work; its answer is lost on the way back.
        answer.resume();
        answer.on('end', () => failOnPurpose(response));
        return;
      }
      response.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(response);
    },
  );
  upstream.on('error', () => response.destroy());
  request.pipe(upstream);
}

// ---------------------------------------------------------------------------------------------
// Every answer the SDK gets, matched to its operation and checked against the document.
// ---------------------------------------------------------------------------------------------

/**
 * Answers the gateway gives on any route before the route runs (a wrong method, a request too slow
 * or with too many headers): checked against the error envelope though no operation lists them.
 */
const anyRouteStatuses = new Set([405, 408, 431]);
const errorResponse = { content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } };
const exercised = new Set<string>();
const mismatches: string[] = [];
let validators: Map<string, (value: unknown) => boolean>;
let ajv: InstanceType<typeof Ajv2020>;
let matchers: { operationId: string; method: string; pattern: RegExp; params: number; path: string }[];

function buildMatchers(doc: Json) {
  const list: typeof matchers = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      const params = (path.match(/\{/g) ?? []).length;
      // The resolver's link paths take the rest of the path, slashes included.
      const source = path
        .replace(/[.]/g, '\\.')
        .replace(/\{linkPath\}$/, '(.+)')
        .replace(/\{[^}]+\}/g, '([^/]+)');
      list.push({
        operationId: operation.operationId,
        method: method.toUpperCase(),
        pattern: new RegExp(`^${source}$`),
        params,
        path,
      });
    }
  }
  // The most literal path wins (/api/v1/keys/signing/rotate over /api/v1/keys/{id}/revoke, /health over /{compressed}).
  return list.sort((a, b) => a.params - b.params || b.path.length - a.path.length);
}

function operationOf(method: string, url: string) {
  const path = new URL(url).pathname;
  return matchers.find((matcher) => matcher.method === method && matcher.pattern.test(path));
}

function resolveRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(resolveRefs);
  if (typeof schema !== 'object' || schema === null) return schema;
  const ref = (schema as Json).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
    return resolveRefs(document.components.schemas[ref.slice('#/components/schemas/'.length)]);
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, resolveRefs(value)]));
}

function validatorFor(operation: Json, operationId: string, status: number, contentType: string) {
  const key = `${operationId} ${status} ${contentType}`;
  let validate = validators.get(key);
  if (!validate) {
    const schema = (operation.responses[String(status)] ?? errorResponse)?.content?.[contentType]?.schema;
    const compiled = schema ? ajv.compile(resolveRefs(schema) as object) : undefined;
    validate = (value: unknown) => {
      if (!compiled) return true;
      const ok = compiled(value);
      if (!ok) mismatches.push(`${key}: ${ajv.errorsText(compiled.errors)} in ${JSON.stringify(value).slice(0, 400)}`);
      return ok;
    };
    validators.set(key, validate);
  }
  return validate;
}

/** A fetch that hands every answer, as it is, to the check, then to the SDK. */
const checkingFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  if (response.headers.get('x-test-proxy-fault')) return response;
  const method = (init?.method ?? 'GET').toUpperCase();
  const url = String(input);
  const matched = operationOf(method, url);
  if (!matched) {
    mismatches.push(`${method} ${url}: no operation of the document has this method and path`);
    return response;
  }
  const operation = document.paths[matched.path][method.toLowerCase()];
  const status = String(response.status);
  const documented = operation.responses[status] ?? (anyRouteStatuses.has(response.status) ? errorResponse : undefined);
  const text = await response.clone().text();
  if (!documented) {
    mismatches.push(`${matched.operationId}: status ${status} is not documented (${text.slice(0, 200)})`);
    return response;
  }
  if (response.status < 400) exercised.add(matched.operationId);
  const documentedTypes = Object.keys(documented.content ?? {});
  const contentType = (response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
  if (documentedTypes.length === 0) {
    if (text !== '' && response.status !== 307)
      mismatches.push(`${matched.operationId} ${status}: a body where none is documented`);
    return response;
  }
  if (!documentedTypes.includes(contentType)) {
    mismatches.push(`${matched.operationId} ${status}: content type ${contentType}, documented ${documentedTypes.join(', ')}`);
    return response;
  }
  if (contentType === 'application/json')
    validatorFor(operation, matched.operationId, response.status, contentType)(JSON.parse(text));
  return response;
};

const client = (apiKey: string | undefined, options: Partial<ConstructorParameters<typeof Hallmark>[0]> = {}) =>
  new Hallmark({ baseUrl: proxyUrl, ...(apiKey ? { apiKey } : {}), fetch: checkingFetch, ...options });

async function rejection(promise: PromiseLike<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof APIError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

/**
 * The per-second limit counts per fixed clock second (of the product's clock). Runs `run` just after
 * a second begins and answers its result when the last request it counts on (`run` answers when
 * that one was answered) was answered within that second; else runs it again in a later second,
 * whose counts are fresh, up to five times.
 */
async function withinOneSecond<T>(run: () => Promise<{ result: T; lastAnsweredAt: number }>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const second = await earlyInWindow(1_000, 1_000, 5, () => t.clock.now().getTime());
    const { result, lastAnsweredAt } = await run();
    if (Math.floor(lastAnsweredAt / 1000) === second) return result;
    if (attempt === 5) throw new Error('five runs in a row spilled into the next second: the machine is too slow for this test');
  }
}

/** `checkingFetch` that also tells `answered` the product's time each answer (or failure) came back. */
const timedFetch =
  (answered: (atMs: number) => void): typeof fetch =>
  async (input, init) => {
    try {
      return await checkingFetch(input, init);
    } finally {
      answered(t.clock.now().getTime());
    }
  };

const seenErrorCodes = new Set<string>();
async function expectErrorClass(promise: PromiseLike<unknown>, ErrorClass: typeof APIError, code: string) {
  const error = await rejection(promise);
  expect(error, `${error.code}: ${error.message}`).toBeInstanceOf(ErrorClass);
  expect(error.code).toBe(code);
  expect(error.status).toBe(errorStatus[code as keyof typeof errorStatus]);
  expect(error.requestId).toMatch(/\S/);
  expect(error.headers).toBeInstanceOf(Headers);
  seenErrorCodes.add(code);
  return error;
}

beforeAll(async () => {
  proxy = createServer(proxyRequest);
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  t = await startTestProduct({
    HALLMARK_PUBLIC_RATE_LIMIT: '1000',
    HALLMARK_SELF_SERVICE_TEST_CLAIMS: 'true',
    HALLMARK_WEBHOOKS_ALLOW_PRIVATE: 'true',
    HALLMARK_WEBHOOK_POLL_MS: '50',
    HALLMARK_WEBHOOK_RETRY_SCHEDULE_MS: '100,100',
    HALLMARK_REQUEST_TIMEOUT_MS: String(requestTimeoutMs),
    HALLMARK_HTTP_REQUEST_TIMEOUT_MS: '1000',
    HALLMARK_HTTP_HEADERS_TIMEOUT_MS: '1000',
  });
  document = (await (await fetch(`${t.url}/api/v1/openapi.json`)).json()) as Json;
  ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  validators = new Map();
  matchers = buildMatchers(document);
  operator = client(t.product.generatedOperatorKey as string);
  const created = await operator.accounts.create({ name: 'SDK house', tier: 'enterprise', environment: 'live' });
  houseKey = created.apiKey.secret;
  accountId = created.account.id;
  await operator.accounts.gtins.grant({ accountId, gtin });
  hallmark = client(houseKey);
});

afterAll(async () => {
  proxy?.closeAllConnections();
  proxy?.close();
  receiver?.closeAllConnections();
  receiver?.close();
  await t?.stop();
});

afterEach(() => {
  expect(mismatches, 'answers that do not match the OpenAPI document').toEqual([]);
});

// ---------------------------------------------------------------------------------------------
// Behaviours
// ---------------------------------------------------------------------------------------------

describe('retries through a proxy that fails on purpose', () => {
  it('a POST answered 503 twice (once before the gateway saw it, once after it created the code) creates exactly one code', async () => {
    let attempts = 0;
    fault = (request) => {
      if (request.method !== 'POST' || !request.url?.startsWith('/api/v1/code/generate')) return 'pass';
      attempts++;
      return attempts === 1 ? 'fail-before' : attempts === 2 ? 'fail-after' : 'pass';
    };
    const before = forwarded.length;
    const { data: code, response } = await hallmark.codes.generate({ gtin, serialNumber: 'RETRY-1' }).withResponse();
    fault = () => 'pass';
    const attemptsSeen = forwarded.slice(before).filter((entry) => entry.path === '/api/v1/code/generate');
    expect(attemptsSeen.map((entry) => entry.status)).toEqual([503, 201, 201]);
    expect(new Set(attemptsSeen.map((entry) => entry.idempotencyKey)).size).toBe(1);
    // The third attempt is the gateway's stored answer to the second, not a second code.
    expect(response.headers.get('idempotent-replayed')).toBe('true');
    expect(code).toMatchObject({ gtin, serial: 'RETRY-1' });
    const rows = await t.product.db.query<{ count: string }>(
      `SELECT count(*)::text AS count FROM event_log WHERE stream_id = $1`,
      [`asset-${code.assetId}`],
    );
    expect(Number(rows[0]?.count)).toBeGreaterThan(0);
    const streams = await t.product.db.query<{ count: string }>(
      `SELECT count(DISTINCT stream_id)::text AS count FROM event_log WHERE data->>'serial' = 'RETRY-1' OR data->>'serialNumber' = 'RETRY-1'`,
    );
    expect(Number(streams[0]?.count)).toBe(1);
  });

  it('429 waits for Retry-After and then succeeds', async () => {
    const { apiKey } = await operator.accounts.create({ name: 'Small shop', tier: 'free', environment: 'live' });
    const answeredAt: number[] = [];
    const small = client(apiKey.secret, { fetch: timedFetch((atMs) => answeredAt.push(atMs)) });
    // Spend the free tier's per-second burst (20) at the start of a second, then call once more: the
    // call's first attempt has to be counted in the burst's second, so a run that spilled into the
    // next one is run again.
    const { burst, me, attempts } = await withinOneSecond(async () => {
      const burst = await Promise.all(
        Array.from({ length: 25 }, () => fetch(`${t.url}/api/v1/accounts/me`, { headers: { 'x-api-key': apiKey.secret } })),
      );
      const before = forwarded.length;
      answeredAt.length = 0;
      const me = await small.accounts.me();
      return { result: { burst, me, attempts: forwarded.slice(before) }, lastAnsweredAt: answeredAt[0] ?? Number.NaN };
    });
    const refused = burst.filter((answer) => answer.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    const retryAfter = Number(refused[0]?.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(me.account.name).toBe('Small shop');
    expect(attempts.map((entry) => entry.status)).toEqual([429, 200]);
    const waited = (attempts[1]?.at ?? 0) - (attempts[0]?.at ?? 0);
    // It waited what Retry-After asked (less the time the 429 took to come back).
    expect(waited).toBeGreaterThanOrEqual(retryAfter * 1000 - 150);
  });

  it('iterates a paged list of 2,500 keys completely', async () => {
    // Revoked, as an account's old keys are: an account holds at most 100 active ones, and the later
    // tests of this file create keys.
    await t.product.db.query(
      `INSERT INTO api_keys (id, account_id, environment, name, key_hash, prefix, scopes, created_at, revoked_at)
       SELECT 'key_' || lpad(to_hex(i), 20, '0'), $1, 'live', 'bulk ' || i, 'seeded-' || i, 'svc_live_', ARRAY['assets:verify'],
              now() - make_interval(secs => i), now()
       FROM generate_series(1, 2500) AS i`,
      [accountId],
    );
    const expected = await t.product.db.query<{ id: string }>(
      `SELECT id FROM api_keys WHERE account_id = $1 AND environment = 'live'`,
      [accountId],
    );
    const before = forwarded.length;
    const ids: string[] = [];
    for await (const key of hallmark.keys.list({ limit: 100, type: 'api' })) ids.push(key.id);
    expect(ids.length).toBeGreaterThanOrEqual(2500);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(expected.map((row) => row.id)));
    const pages = forwarded.slice(before).filter((entry) => entry.path.startsWith('/api/v1/keys'));
    expect(pages.length).toBe(Math.ceil(ids.length / 100));
    const first = await hallmark.keys.list({ limit: 100, type: 'api' });
    expect(first.keys).toHaveLength(100);
  });
});

// ---------------------------------------------------------------------------------------------
// Every operation
// ---------------------------------------------------------------------------------------------

let receiver: Server;
const deliveries: { headers: IncomingMessage['headers']; body: string }[] = [];

/** What the operations below made, for the ones after them. */
const state: Json = {};
/** The secret of a key keys.create made (its answer is an API key, with its secret, or a public key). */
function secretOf(created: object): string {
  if (!('secret' in created) || typeof created.secret !== 'string') throw new Error('not an API key');
  return created.secret;
}

describe('every operation through the SDK, answers checked against the document', () => {
  it('system, accounts, GTIN claims', async () => {
    const keyless = client(undefined);
    expect((await keyless.system.landing()).openapi).toBeDefined();
    expect(await keyless.system.health()).toMatchObject({ status: 'ok' });
    await keyless.system.ready();
    const served = await keyless.system.openApi();
    expect(served).toMatchObject({ openapi: '3.1.0' });
    await hallmark.system.ping({ service: 'code-service' });
    const me = await hallmark.accounts.me();
    expect(me.account.id).toBe(accountId);
    const accounts = [];
    for await (const account of operator.accounts.list({ limit: 2 })) accounts.push(account);
    expect(accounts.map((account) => account.id)).toContain(accountId);
    const gtins = await operator.accounts.gtins.list({ accountId });
    expect(gtins.claims.map((claim) => claim.value)).toContain(gtin);
    const granted = await operator.accounts.gtins.grant({ accountId, gtin: otherGtin });
    expect((await hallmark.gtins.list()).claims.map((claim) => claim.id)).toContain(granted.id);
    expect((await hallmark.gtins.revoke({ claimId: granted.id })).status).toBe('revoked');
    // Self-service claims: with a test key (the operator allows them here), in the test environment only.
    const testAccount = await operator.accounts.create({ name: 'Tester', tier: 'starter', environment: 'test' });
    const tester = client(testAccount.apiKey.secret);
    expect(await tester.gtins.claim({ gtin: otherGtin })).toMatchObject({ source: 'claimed', environment: 'test' });
    await expectErrorClass(
      tester.gtins.claim({ gtin: otherGtin, environment: 'live' }),
      GtinClaimNotAllowedError,
      'GTIN_CLAIM_NOT_ALLOWED',
    );
  });

  it('keys: create (API and public), list, rotate, revoke, the signing key, the key set', async () => {
    const created = await hallmark.keys.create({ name: 'scanner', scopes: ['assets:verify'] });
    expect(created).toMatchObject({ secret: expect.stringMatching(/^svc_live_/), restrictions: null });
    state.verifyOnlyKey = created;
    // Restricted to one GTIN (docs/API.md, "Resource restrictions"): the answer says so, and the key is refused what names none.
    const restricted = await hallmark.keys.create({ name: 'one product', scopes: ['*'], restrictions: { gtins: [gtin] } });
    expect(restricted).toMatchObject({ restrictions: { gtins: [gtin] } });
    await expectErrorClass(client(secretOf(restricted)).keys.list(), KeyRestrictedError, 'KEY_RESTRICTED');
    // The body's type (from the OpenAPI document) asks for the proof of possession.
    const publicKey = await hallmark.keys.create({
      ...publicKeyRegistration(generateEd25519KeyPair(), { accountId }, 'factory'),
      algorithm: 'Ed25519',
    });
    expect(publicKey).toMatchObject({ type: 'public' });
    const rotated = await hallmark.keys.rotate({ id: created.id as string, graceSeconds: 900 });
    expect(rotated).toBeDefined();
    const revoked = await hallmark.keys.revoke({ id: publicKey.id as string });
    expect(revoked.status).toBe('revoked');
    await hallmark.keys.signing.rotate();
    const jwks = await client(undefined).keys.jwks();
    expect(jwks.keys.length).toBeGreaterThan(0);
    state.jwks = jwks;
  });

  it('codes: generate, batch, verify, report, confirm and dismiss, QR; offline checks of the code', async () => {
    const code = await hallmark.codes.generate({ gtin, serialNumber: 'SDK-1', batchNumber: 'L1' });
    state.code = code;
    const batch = await hallmark.codes.generateBatch({
      items: [
        { gtin, serialNumber: 'SDK-2' },
        { gtin, serialNumber: 'SDK-3' },
      ],
    });
    expect(batch.results).toHaveLength(2);
    state.batch = batch.results;
    const verified = await hallmark.codes.verify({
      url: code.url,
      location: { latitude: 48.85, longitude: 2.35, country: 'FR' },
    });
    expect(verified.verdict).toBe('AUTHENTIC');
    await hallmark.codes.verify({ url: code.url, view: 'quickstart' });
    const listed = await hallmark.codes.list({ limit: 2 });
    expect(listed.pagination).toBeDefined();
    expect(await hallmark.codes.get({ assetId: code.assetId })).toMatchObject({ assetId: code.assetId });
    const svg = await hallmark.codes.qr({ url: code.url });
    expect(svg).toContain('<svg');
    const offline = verifyOffline(code.url, await client(undefined).keys.jwks());
    expect(offline).toMatchObject({ valid: true, gtin, serial: 'SDK-1' });

    const urls = (batch.results as Json[]).map((result) => result.code?.url ?? result.url);
    const report = await hallmark.codes.report({ url: urls[0], reason: 'label looks wrong' });
    const second = await hallmark.codes.report({ url: urls[1], reason: 'duplicate label' });
    const reports = await hallmark.codes.reports.list({ status: 'pending' });
    expect(reports.reports.length).toBeGreaterThanOrEqual(2);
    expect((await hallmark.codes.reports.confirm({ reportId: report.reportId, reason: 'checked' })).status).toBe('confirmed');
    expect((await hallmark.codes.reports.dismiss({ reportId: second.reportId, reason: 'fine' })).status).toBe('dismissed');
    expect(await hallmark.codes.reports.lift({ reportId: report.reportId, reason: 'wrong code' })).toMatchObject({
      status: 'lifted',
      liftReason: 'wrong code',
    });
  });

  it('schemas: create, list, get, update, validate, delete', async () => {
    const schema = await hallmark.schemas.create({
      name: 'Watch',
      vertical: 'watches',
      fields: [{ name: 'colour', type: 'string', required: true }],
    });
    expect((await hallmark.schemas.list()).schemas.map((each) => each.id)).toContain(schema.id);
    expect((await hallmark.schemas.get({ id: schema.id })).name).toBe('Watch');
    const updated = await hallmark.schemas.update({
      id: schema.id,
      fields: [{ name: 'colour', type: 'string', required: false }],
    });
    expect(updated.version).toBe(2);
    const outcome = await hallmark.schemas.validate({ id: schema.id, body: { colour: 'red' } });
    expect(outcome.isValid).toBe(true);
    expect(await hallmark.schemas.delete({ id: schema.id })).toBeUndefined();
  });

  it('compliance: chain, Merkle root, proof and consistency, export (audited offline), config', async () => {
    const assetId = state.code.assetId as string;
    expect((await hallmark.compliance.verifyChain({ assetId })).isValid).toBe(true);
    const root = await hallmark.compliance.merkle.root({ assetId });
    const exported = await hallmark.compliance.export({ assetId });
    const eventId = (exported.events as Json[])[0]?.eventId ?? (exported.events as Json[])[0]?.id;
    await hallmark.compliance.merkle.proof({ assetId, eventId });
    await hallmark.compliance.merkle.consistency({ assetId, from: 1, to: root.treeSize });
    const audit = auditExport(exported as never, await client(undefined).keys.jwks());
    expect(audit).toMatchObject({ valid: true });
    const config = await hallmark.compliance.config.get();
    const changed = await hallmark.compliance.config.update({ defaultExportFormat: 'json' });
    expect(changed.version).toBeGreaterThanOrEqual(config.version);
  });

  it('auction: register, photo upload, provenance, public verification, dashboard, transfer', async () => {
    const { object } = await hallmark.auction.objects.register({
      title: 'Submariner 1680',
      category: 'watch',
      ownerId: 'client-jane',
    });
    state.object = object;
    const uploaded = await hallmark.auction.objects.uploadPhoto({
      objectId: object.id,
      angle: 'dial',
      photo: await picture(7, { format: 'png', side: 256 }),
    });
    expect(uploaded.angle).toBe('dial');
    await hallmark.auction.provenance.record({
      objectId: object.id,
      eventType: 'cataloged',
      actorRole: 'auction_house',
      description: 'Lot 1',
    });
    expect((await hallmark.auction.objects.provenance({ serial: object.service_serial })).chain_valid).toBe(true);
    await client(undefined).auction.objects.publicVerify({ serial: object.service_serial });
    const listed = [];
    for await (const each of hallmark.auction.objects.list()) listed.push(each);
    expect(listed.length).toBeGreaterThan(0);
    const transfer = await hallmark.auction.transfers.initiate({
      objectId: object.id,
      fromOwnerId: 'client-jane',
      toOwnerId: 'client-bob',
      salePrice: 1000,
      saleCurrency: 'EUR',
    });
    await expectErrorClass(
      hallmark.auction.transfers.initiate({
        objectId: object.id,
        fromOwnerId: 'client-jane',
        toOwnerId: 'client-eve',
        salePrice: 1,
        saleCurrency: 'EUR',
      }),
      ConflictError,
      'CONFLICT',
    );
    // The buyer backed out: cancelled, and offered again.
    expect((await hallmark.auction.transfers.cancel({ transferId: transfer.transferId })).status).toBe('cancelled');
    const offered = await hallmark.auction.transfers.initiate({
      objectId: object.id,
      fromOwnerId: 'client-jane',
      toOwnerId: 'client-bob',
      salePrice: 1000,
      saleCurrency: 'EUR',
    });
    const confirmed = await hallmark.auction.transfers.confirm({
      transferId: offered.transferId,
      transferCode: offered.transferCode,
    });
    expect(confirmed.status).toBe('completed');
  });

  it('links, resolver pages and redirects, branding', async () => {
    const link = await hallmark.links.create({
      gtin,
      linkType: 'gs1:pip',
      href: 'https://brand.example/pip',
      title: 'Product',
      type: 'text/html',
    });
    expect((await hallmark.links.list({ gtin })).links.map((each) => each.id)).toContain(link.id);
    expect((await hallmark.links.update({ id: link.id, title: 'Product page' })).title).toBe('Product page');

    const codeUrl = new URL(state.code.url as string);
    const linkPath = codeUrl.pathname.replace(/^\/01\//, '');
    const sig = codeUrl.searchParams.get('sig') ?? undefined;
    const resolver = client(undefined);
    const redirect = await resolver.resolver.resolve({ linkPath, sig, linkType: 'gs1:pip' }).withResponse();
    expect(redirect.response.status).toBe(307);
    expect(redirect.response.headers.get('location')).toMatch(/^https:\/\/brand\.example\/pip/);
    await resolver.resolver.resolveOptions({ linkPath });
    const page = await resolver.resolver.verificationPage({ linkPath, sig });
    expect(page).toContain('<html');
    // Loaded as another page's image, the page is refused and counts no scan (docs/RESOLVER.md).
    await expectErrorClass(
      resolver.resolver.verificationPage(
        { linkPath, sig },
        { headers: { 'sec-fetch-dest': 'image', accept: 'application/json' } },
      ),
      EmbeddedLoadRefusedError,
      'EMBEDDED_LOAD_REFUSED',
    );
    await resolver.resolver.verificationPageOptions({ linkPath });
    const compressed = await resolver.resolver.resolveCompressed({ compressed: 'ARHKVAdpQg' }).withResponse();
    expect(compressed.response.status).toBe(307);
    await resolver.resolver.resolveCompressedOptions({ compressed: 'ARHKVAdpQg' });
    const reported = await resolver.resolver.report({ link: state.code.url, reason: 'seen twice' });
    expect(reported).toContain('<html');
    expect(await resolver.resolver.description()).toBeDefined();
    expect(await hallmark.links.delete({ id: link.id })).toBeUndefined();
    // The links one key made, all at once (another made by this client's key, then removed).
    const another = await hallmark.links.create({
      gtin,
      linkType: 'gs1:faqs',
      href: 'https://brand.example/faq',
      title: 'FAQ',
      type: 'text/html',
    });
    expect(await hallmark.links.removeMadeBy({ createdBy: another.createdBy as string })).toEqual({ removed: 1, more: false });
    // With no link left for the GTIN, the scan goes to the verification page.
    const toPage = await resolver.resolver.resolve({ linkPath, sig }).withResponse();
    expect(toPage.response.status).toBe(307);
    expect(toPage.response.headers.get('location')).toContain('/verify/01/');

    await hallmark.account.branding.update({ displayName: 'SDK House', primaryColor: '#112233', textColor: '#ffffff' });
    const withLogo = await hallmark.account.branding.uploadLogo({ body: await picture(3, { format: 'png', side: 128 }) });
    const branding = await hallmark.account.branding.get();
    expect(branding.displayName).toBe('SDK House');
    const logoFile = String(withLogo.logo?.url ?? withLogo.logo)
      .split('/')
      .pop() as string;
    expect((await resolver.resolver.logo({ file: logoFile })).byteLength).toBeGreaterThan(0);
    expect(await resolver.resolver.theme({ file: '112233-ffffff.css' })).toContain('#112233');
    await hallmark.account.branding.deleteLogo();
  });

  it('scans and the blocklist', async () => {
    const scans = [];
    for await (const scan of hallmark.scans.list({ limit: 2 })) scans.push(scan);
    expect(scans.length).toBeGreaterThan(0);
    await hallmark.scans.aggregates({ groupBy: 'verdict' });
    await hallmark.scans.topCodes();
    await hallmark.scans.countries();
    const block = await hallmark.blocklist.create({ gtin, serial: 'BLOCKED-1', kind: 'counterfeit', reason: 'seized' });
    const bulk = await hallmark.blocklist.createFromCsv({ body: `gtin,serial,kind\n${gtin},BLOCKED-2,counterfeit\n` });
    expect(bulk.results).toHaveLength(1);
    expect((await hallmark.blocklist.list()).blocks.length).toBeGreaterThanOrEqual(2);
    expect((await hallmark.blocklist.delete({ blockId: block.blockId })).status).toBe('removed');
    // The blocks one key made, all at once (BLOCKED-2, from the CSV: its key is this client's).
    expect(block.createdBy).toBeDefined();
    expect(await hallmark.blocklist.removeMadeBy({ createdBy: block.createdBy as string })).toEqual({ removed: 1, more: false });
  });

  it('webhooks: endpoints, a test message verified by verifyWebhook (v1 and v1a), messages, attempts, replays', async () => {
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        deliveries.push({ headers: request.headers, body: Buffer.concat(chunks).toString() });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const endpoint = await hallmark.webhooks.endpoints.create({
      url,
      eventTypes: ['test', 'scan.suspicious'],
      description: 'SOC',
    });
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect((await hallmark.webhooks.endpoints.list()).endpoints.map((each) => each.id)).toContain(endpoint.id);
    expect((await hallmark.webhooks.endpoints.get({ id: endpoint.id })).url).toBe(url);
    await hallmark.webhooks.endpoints.update({ id: endpoint.id, description: 'Security team' });
    const queued = await hallmark.webhooks.endpoints.test({ id: endpoint.id });
    const delivery = await waitFor(
      'the test message',
      async () => deliveries.find((each) => each.headers['webhook-id'] === queued.id),
      {
        timeoutMs: 10_000,
        intervalMs: 20,
      },
    );
    const headers = delivery.headers as Record<string, string>;
    const jwks = await client(undefined).keys.jwks();
    expect(await verifyWebhook(delivery.body, headers, { secret: endpoint.secret })).toMatchObject({ type: 'test' });
    // v1a alone: the key set, no secret.
    expect(await verifyWebhook(delivery.body, headers, { jwks, accountId, environment: 'live' })).toMatchObject({ type: 'test' });
    await expect(
      verifyWebhook(`${delivery.body} `, headers, { secret: endpoint.secret, jwks, accountId, environment: 'live' }),
    ).rejects.toThrow(/No signature/);
    await expect(
      verifyWebhook(delivery.body, headers, { jwks, accountId: 'acc_someone_else', environment: 'live' }),
    ).rejects.toThrow(/No signature/);

    const messages = await hallmark.webhooks.messages.list({ id: endpoint.id });
    expect(messages.messages.map((message) => message.id)).toContain(queued.id);
    await waitFor('an attempt', async () => {
      const { attempts } = await hallmark.webhooks.messages.attempts({ id: endpoint.id, messageId: queued.id });
      return attempts.length > 0 ? attempts : undefined;
    });
    await hallmark.webhooks.messages.replay({ id: endpoint.id, messageId: queued.id });
    const rotated = await hallmark.webhooks.endpoints.rotateSecret({ id: endpoint.id });
    expect(rotated.secret).not.toBe(endpoint.secret);
    const replayed = await hallmark.webhooks.endpoints.replayFailed({
      id: endpoint.id,
      since: new Date(Date.now() - 3_600_000).toISOString(),
    });
    expect(replayed.replayed).toBeGreaterThanOrEqual(0);
    expect((await hallmark.webhooks.endpoints.disable({ id: endpoint.id })).status).toBe('disabled');
    expect(await hallmark.webhooks.endpoints.delete({ id: endpoint.id })).toBeUndefined();
  });

  it('usage, console sessions (cookie and X-Hallmark-Console), the console', async () => {
    await hallmark.usage.get();
    for await (const entry of hallmark.usage.keys({ limit: 5 })) expect(entry).toBeDefined();
    const browser = client(undefined);
    const { response } = await browser.sessions.create({ apiKey: houseKey }).withResponse();
    const cookie = response.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; ');
    expect(cookie).toMatch(/hallmark_session=/);
    await browser.sessions.current.get(undefined, { headers: { cookie } });
    await expectErrorClass(
      browser.sessions.current.update({ environment: 'live' }, { headers: { cookie } }),
      CsrfRejectedError,
      'CSRF_REJECTED',
    );
    await browser.sessions.current.update({ environment: 'live' }, { headers: { cookie, 'x-hallmark-console': '1' } });
    await browser.sessions.current.delete(undefined, { headers: { cookie, 'x-hallmark-console': '1' } });
    expect(await browser.console.page()).toContain('<');
    expect(await browser.console.file({ file: 'keys' })).toContain('<');
  });
});

// ---------------------------------------------------------------------------------------------
// Every error code the server can be made to answer, as its class
// ---------------------------------------------------------------------------------------------

describe('errors from the running server, each as its class', () => {
  it('maps the answers to their classes', async () => {
    const serial = (suffix: string) => `ERR-${suffix}`;
    // A code of its own, so this test also runs alone (without the earlier tests' codes).
    const own = await hallmark.codes.generate({ gtin, serialNumber: serial('0') });
    const codeUrl = () => own.url as string;
    await expectErrorClass(hallmark.keys.create({ name: '', scopes: [] } as never), ValidationError, 'VALIDATION_ERROR');
    await expectErrorClass(
      hallmark.codes.generate({ gtin: '09506000134353', serialNumber: serial('1') }),
      InvalidGtinError,
      'INVALID_GTIN',
    );
    await expectErrorClass(hallmark.codes.generate({ gtin } as never), MissingRequiredFieldError, 'MISSING_REQUIRED_FIELD');
    await expectErrorClass(
      hallmark.codes.generate({ gtin, serialNumber: serial('0') }),
      DuplicateSerialError,
      'DUPLICATE_SERIAL',
    );
    await expectErrorClass(
      hallmark.codes.generate({ gtin: otherGtin, serialNumber: serial('2') }),
      GtinNotOwnedError,
      'GTIN_NOT_OWNED',
    );
    await expectErrorClass(hallmark.codes.verify({ url: 'not a link' }), InvalidUrlError, 'INVALID_URL');
    const unsigned = new URL(codeUrl());
    unsigned.search = '';
    await expectErrorClass(hallmark.codes.verify({ url: unsigned.toString() }), MissingSignatureError, 'MISSING_SIGNATURE');
    const foreign = new URL(codeUrl());
    foreign.pathname = `/01/${otherGtin}/21/NOBODY`;
    await expectErrorClass(hallmark.codes.verify({ url: foreign.toString() }), KeyNotFoundError, 'KEY_NOT_FOUND');
    await expectErrorClass(hallmark.schemas.get({ id: 'sch_none' }), NotFoundError, 'NOT_FOUND');
    await expectErrorClass(client(undefined).keys.list(), MissingApiKeyError, 'MISSING_API_KEY');
    await expectErrorClass(client(`svc_live_${'0'.repeat(64)}`).keys.list(), InvalidApiKeyError, 'INVALID_API_KEY');
    const scanner = await hallmark.keys.create({ name: 'scanner 2', scopes: ['assets:verify'] });
    await expectErrorClass(client(secretOf(scanner)).keys.list(), InsufficientScopeError, 'INSUFFICIENT_SCOPE');
    await hallmark.keys.revoke({ id: scanner.id as string });
    await waitFor('the revocation', async () =>
      (await fetch(`${t.url}/api/v1/accounts/me`, { headers: { 'x-api-key': secretOf(scanner) } })).status === 401
        ? true
        : undefined,
    );
    await expectErrorClass(client(secretOf(scanner)).accounts.me(), RevokedApiKeyError, 'REVOKED_API_KEY');
    await expectErrorClass(
      hallmark.codes
        .generate({ gtin, serialNumber: serial('3') }, { idempotencyKey: 'reused-key' })
        .then(() => hallmark.codes.generate({ gtin, serialNumber: serial('4') }, { idempotencyKey: 'reused-key' })),
      IdempotencyKeyReusedError,
      'IDEMPOTENCY_KEY_REUSED',
    );
    await expectErrorClass(
      hallmark.codes.verify({ url: `https://x.example/${'a'.repeat(2 * 1024 * 1024)}` }),
      PayloadTooLargeError,
      'PAYLOAD_TOO_LARGE',
    );
    await expectErrorClass(
      hallmark.codes.verify({ url: codeUrl() }, { headers: { 'content-type': 'text/plain' } }),
      UnsupportedMediaTypeError,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    await expectErrorClass(
      // Straight to the gateway: the test proxy, a Node server too, would refuse such headers itself.
      client(houseKey, { baseUrl: t.url }).accounts.me(undefined, {
        headers: { 'x-padding': 'a'.repeat(20_000) },
        maxRetries: 0,
      }),
      RequestHeadersTooLargeError,
      'REQUEST_HEADERS_TOO_LARGE',
    );
    // A fetch that asks with the wrong method: what a hand-written client gets wrong.
    const wrongMethod = client(houseKey, { fetch: (input, init) => fetch(input, { ...init, method: 'PUT' }) });
    await expectErrorClass(wrongMethod.accounts.me(), MethodNotAllowedError, 'METHOD_NOT_ALLOWED');
    // A body that never finishes: the gateway's request timeout (HALLMARK_HTTP_REQUEST_TIMEOUT_MS, 1 s here).
    const stalled = client(houseKey, {
      maxRetries: 0,
      fetch: (input, init) =>
        fetch(input, {
          ...init,
          body: new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode('{"url":')) }),
          duplex: 'half',
        } as RequestInit),
    });
    await expectErrorClass(stalled.codes.verify({ url: codeUrl() }), RequestTimeoutError, 'REQUEST_TIMEOUT');
    // A service that answers later than HALLMARK_REQUEST_TIMEOUT_MS.
    await expectErrorClass(
      hallmark.system.ping({ service: 'code-service', delayMs: 2_000 }, { maxRetries: 0 }),
      ServiceUnavailableError,
      'SERVICE_UNAVAILABLE',
    );
    const { apiKey: tiny } = await operator.accounts.create({ name: 'Tiny', tier: 'free', environment: 'live' });
    // Past the free tier's 20 a second, then one call in the same clock second (run again if it spilled into the next).
    let tinyAnsweredAt = Number.NaN;
    const tinyClient = client(tiny.secret, { maxRetries: 0, fetch: timedFetch((atMs) => (tinyAnsweredAt = atMs)) });
    const { limited } = await withinOneSecond(async () => {
      await Promise.all(
        Array.from({ length: 30 }, () => fetch(`${t.url}/api/v1/accounts/me`, { headers: { 'x-api-key': tiny.secret } })),
      );
      tinyAnsweredAt = Number.NaN;
      const limited = tinyClient.accounts.me();
      // Settled here; its outcome is checked below, once it fell in the burst's second.
      await limited.then(
        () => undefined,
        () => undefined,
      );
      return { result: { limited }, lastAnsweredAt: tinyAnsweredAt };
    });
    await expectErrorClass(limited, RateLimitedError, 'RATE_LIMITED');

    // Last, as they move the product's clock: an expired key, and a transfer code past its 72 h.
    const shortLived = await hallmark.keys.create({ name: 'short', scopes: ['assets:verify'], expiresIn: '1h' });
    const { object } = await hallmark.auction.objects.register({ title: 'Lot 99', category: 'watch', ownerId: 'client-jane' });
    const transfer = await hallmark.auction.transfers.initiate({
      objectId: object.id,
      fromOwnerId: 'client-jane',
      toOwnerId: 'b',
      salePrice: 1,
      saleCurrency: 'EUR',
    });
    t.clock.advance(73 * 3_600_000);
    await expectErrorClass(client(secretOf(shortLived)).accounts.me(), ExpiredApiKeyError, 'EXPIRED_API_KEY');
    await expectErrorClass(
      hallmark.auction.transfers.confirm({ transferId: transfer.transferId, transferCode: transfer.transferCode }),
      GoneError,
      'GONE',
    );
  });

  it('covers every error code but those no request can cause', () => {
    const unreachable: Record<string, string> = {
      INTERNAL_ERROR: 'an unexpected exception in the product; errors.unit.test.ts maps it from its envelope',
    };
    const missing = Object.keys(errorClasses).filter((code) => !seenErrorCodes.has(code) && !(code in unreachable));
    expect(missing).toEqual([]);
  });
});

describe('coverage', () => {
  it('the SDK called every operation of the document, but the short list of exclusions', () => {
    const all = Object.values<Json>(document.paths).flatMap((item) =>
      Object.values<Json>(item).map((op) => op.operationId as string),
    );
    const missing = all.filter((operationId) => !exercised.has(operationId) && !(operationId in notExercised));
    expect(missing, 'operations no test called through the SDK').toEqual([]);
    expect(Object.keys(notExercised).filter((operationId) => exercised.has(operationId))).toEqual([]);
  });

  it('a connection error is not an answer', async () => {
    await expect(new Hallmark({ baseUrl: 'http://127.0.0.1:9', maxRetries: 0 }).system.health()).rejects.toBeInstanceOf(
      APIConnectionError,
    );
  });
});
