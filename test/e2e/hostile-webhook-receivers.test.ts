// The RECEIVER side of webhooks (a review, 2026-12-05): what a brand's server uses to decide whether a
// `scan.counterfeit` / `code.blocked` message really came from Hallmark. Real messages from the
// embedded product are delivered to a loopback receiver started here; each is then handed, as
// received and in forged variants, to both helpers a receiver is told to use: the TypeScript SDK's
// `verifyWebhook` (packages/sdk/src/webhooks.ts) and the Python client's `verify_webhook`
// (clients/python/hallmark/webhook_signature.py, run with Debian's /usr/bin/python3). docs/WEBHOOKS.md
// ("What we send", "Verifying a message") and docs/SDK.md ("Webhooks", TypeScript and Python) say what
// they promise. Any message the two judge differently is a finding too (SDK.md, Python: "The
// TypeScript verifyWebhook refuses the same"). Found and fixed: the TypeScript helper checked the body
// decoded and encoded again, so a BOM or a byte that is not UTF-8 put into a genuine body still
// verified; it took unpadded base64 and a secret with a newline, and rounded now to seconds, where
// Python refused; Python called forged non-ASCII header bytes a misconfiguration (ValueError); both
// checked every entry of a 1 MB signature header (seconds); the docs did not tell receivers to keep
// webhook-ids or drop an old secret, and their Python example and snippet failed as written.
import { spawn } from 'node:child_process';
import { createHmac, sign as signEd25519 } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ed25519PrivateKeyObject, generateEd25519KeyPair } from '@hallmark/crypto';
import { verifyWebhook } from '@hallmark/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { publicKeyRegistration } from '../support/public-keys.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const python = '/usr/bin/python3';

interface Delivery {
  path: string;
  headers: IncomingMessage['headers'];
  /** The body exactly as received. */
  raw: Buffer;
  json: Json;
}

const received: Delivery[] = [];
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const raw = Buffer.concat(chunks);
    received.push({ path: request.url ?? '', headers: request.headers, raw, json: JSON.parse(raw.toString('utf8')) });
    response.writeHead(204).end();
  });
});

let t: TestProduct;
let base: string;

interface Brand {
  accountId: string;
  key: string;
  testKey: string;
  gtin: string;
}
let a: Brand;
let b: Brand;
/** A's live endpoint (scan.counterfeit, code.blocked, test) and its secret. */
let hookA: Json;
/** A second live endpoint of A (a partner's relay, say). */
let hookA2: Json;
/** B's live endpoint. */
let hookB: Json;
/** A's test-environment endpoint (made with A's test key), aimed at the same receiver. */
let hookATest: Json;

let counterfeitA: Delivery;
let blockedA: Delivery;
let blockedAatA2: Delivery;
let counterfeitB: Delivery;
let testA: Delivery;
let jwks: { keys: Json[] };

/** The owner's words of the block: non-ASCII, a U+FFFD, a quote and a slash (so re-serialisations differ). */
const blockReason = 'Contrefaçon � 偽物 "vu" à Paris </b>';

const api = (key: string) => (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
  call<Json>(t.url, method, `/api/v1${path}`, { key, body, headers });
function ok(response: { status: number; body: Json }, status = 200) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  return response.body;
}
const forgeLink = (url: string) => url.replace(/sig=(.)/, (_: string, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);

async function brand(name: string, prefix: string, gtin: string): Promise<Brand> {
  const operator = t.product.generatedOperatorKey as string;
  const created = ok(await api(operator)('POST', '/accounts', { name, tier: 'enterprise' }), 201);
  ok(await api(operator)('POST', `/accounts/${created.account.id}/gtins`, { prefix }), 201);
  const testKey = ok(
    await api(created.apiKey.secret)('POST', '/keys', { name: 'sandbox', scopes: ['*'], environment: 'test' }),
    201,
  );
  return { accountId: created.account.id, key: created.apiKey.secret, testKey: testKey.secret, gtin };
}

function delivered(what: string, match: (delivery: Delivery) => boolean): Promise<Delivery> {
  return waitFor(what, async () => received.find(match), { timeoutMs: 8_000, intervalMs: 20 });
}

// ---------------------------------------------------------------------------------------------
// The two helpers, side by side.

interface Options {
  secret?: string | string[];
  jwks?: { keys: Json[] };
  accountId?: string;
  environment?: 'live' | 'test';
  toleranceSeconds?: number;
  /** Milliseconds since the epoch: the receiver's clock. */
  nowMs: number;
}

interface Case {
  name: string;
  body: Buffer;
  headers: Record<string, string>;
  options: Options;
  /** What TypeScript is handed instead of `headers` (a fetch `Headers`, say); Python gets `headers`. */
  tsHeaders?: Headers;
}

interface Verdict {
  ok: boolean;
  error?: string;
  ms: number;
  /** Signature checks run (HMAC and Ed25519): crypto.subtle.verify calls, or Python's hmac.new and verify_ed25519. */
  checks?: number;
}

interface Judged {
  name: string;
  ts: Verdict;
  py: Verdict;
}

async function judgeTs(one: Case): Promise<Verdict> {
  const spy = vi.spyOn(crypto.subtle, 'verify');
  try {
    const verdict = await judgeTsUncounted(one);
    return { ...verdict, checks: spy.mock.calls.length };
  } finally {
    spy.mockRestore();
  }
}

async function judgeTsUncounted(one: Case): Promise<Verdict> {
  const started = performance.now();
  try {
    await verifyWebhook(one.body, one.tsHeaders ?? one.headers, {
      ...(one.options.secret !== undefined ? { secret: one.options.secret } : {}),
      ...(one.options.jwks !== undefined ? { jwks: one.options.jwks } : {}),
      ...(one.options.accountId !== undefined ? { accountId: one.options.accountId } : {}),
      ...(one.options.environment !== undefined ? { environment: one.options.environment } : {}),
      ...(one.options.toleranceSeconds !== undefined ? { toleranceSeconds: one.options.toleranceSeconds } : {}),
      now: one.options.nowMs,
    });
    return { ok: true, ms: performance.now() - started };
  } catch (error) {
    return { ok: false, error: `${(error as Error).name}: ${(error as Error).message}`, ms: performance.now() - started };
  }
}

const pythonJudge = `
import base64, json, sys, time
import hallmark.webhook_signature as ws
from hallmark import WebhookVerificationError, verify_webhook
checks = [0]
plain_ed25519, plain_hmac = ws.verify_ed25519, ws.hmac.new
def counted_ed25519(*args):
    checks[0] += 1
    return plain_ed25519(*args)
def counted_hmac(*args, **kwargs):
    checks[0] += 1
    return plain_hmac(*args, **kwargs)
ws.verify_ed25519 = counted_ed25519
ws.hmac.new = counted_hmac
out = []
for case in json.load(sys.stdin):
    options = dict(case["options"])
    checks[0] = 0
    started = time.perf_counter()
    try:
        verify_webhook(base64.b64decode(case["body"]), case["headers"], **options)
        verdict = {"ok": True}
    except WebhookVerificationError as error:
        verdict = {"ok": False, "error": "WebhookVerificationError: " + str(error)}
    except ValueError as error:
        verdict = {"ok": False, "error": "ValueError: " + str(error)}
    except Exception as error:
        verdict = {"ok": False, "error": "UNEXPECTED " + type(error).__name__ + ": " + str(error)}
    verdict["ms"] = (time.perf_counter() - started) * 1000
    verdict["checks"] = checks[0]
    out.append(verdict)
json.dump(out, sys.stdout)
`;

/** Runs a Python program on `input` without blocking the event loop (the product serves from this process). */
function runPython(program: string, input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-c', program], {
      cwd: root,
      env: { ...process.env, PYTHONPATH: join(root, 'clients', 'python'), PYTHONDONTWRITEBYTECODE: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

async function judgePy(cases: Case[]): Promise<Verdict[]> {
  const input = cases.map((one) => ({
    body: one.body.toString('base64'),
    headers: one.headers,
    options: {
      ...(one.options.secret !== undefined ? { secret: one.options.secret } : {}),
      ...(one.options.jwks !== undefined ? { jwks: one.options.jwks } : {}),
      ...(one.options.accountId !== undefined ? { account_id: one.options.accountId } : {}),
      ...(one.options.environment !== undefined ? { environment: one.options.environment } : {}),
      ...(one.options.toleranceSeconds !== undefined ? { tolerance: one.options.toleranceSeconds } : {}),
      now: one.options.nowMs / 1000,
    },
  }));
  const { code, stdout, stderr } = await runPython(pythonJudge, JSON.stringify(input));
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout) as Verdict[];
}

async function judge(cases: Case[]): Promise<Judged[]> {
  const py = await judgePy(cases);
  const out: Judged[] = [];
  for (const [index, one] of cases.entries()) out.push({ name: one.name, ts: await judgeTs(one), py: py[index] as Verdict });
  return out;
}

const show = (each: Judged) =>
  `${each.name}: TS ${each.ts.ok ? 'ACCEPTS' : `refuses (${each.ts.error})`}; Python ${each.py.ok ? 'ACCEPTS' : `refuses (${each.py.error})`}`;
/** The cases either helper accepted. */
const acceptedBySome = (judged: Judged[]) => judged.filter((each) => each.ts.ok || each.py.ok).map(show);
/** The cases either helper refused. */
const refusedBySome = (judged: Judged[]) => judged.filter((each) => !each.ts.ok || !each.py.ok).map(show);
/** The cases the helpers judged differently. */
const disagreements = (judged: Judged[]) => judged.filter((each) => each.ts.ok !== each.py.ok).map(show);
/** A Python error that is neither a WebhookVerificationError nor the documented ValueError is a crash. */
const crashes = (judged: Judged[]) => judged.filter((each) => each.py.error?.startsWith('UNEXPECTED')).map(show);

// ---------------------------------------------------------------------------------------------
// Messages and their pieces.

/** The Standard Webhooks headers of a delivery, as the receiver got them (lower-case names). */
function headersOf(delivery: Delivery): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'webhook-key-id', 'content-type']) {
    const value = delivery.headers[name];
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}
const timestampOf = (delivery: Delivery) => Number(delivery.headers['webhook-timestamp']);
/** The receiver's clock one second after the attempt was signed. */
const freshFor = (delivery: Delivery) => (timestampOf(delivery) + 1) * 1000;
function signaturesOf(delivery: Delivery): { v1: string[]; v1a: string[] } {
  const entries = String(delivery.headers['webhook-signature']).split(' ');
  return {
    v1: entries.filter((entry) => entry.startsWith('v1,')),
    v1a: entries.filter((entry) => entry.startsWith('v1a,')),
  };
}
const secretOnly = (secret: string | string[]) => ({ secret });
const keySetOnly = (accountId: string, environment: 'live' | 'test' = 'live') => ({ jwks, accountId, environment });
const both = (secret: string, accountId: string) => ({ secret, jwks, accountId, environment: 'live' as const });

/** Signs `<id>.<timestamp>.<body>` as the service's `v1` does, under a `whsec_` secret. */
function v1Of(secret: string, id: string, timestamp: string, body: Buffer): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key)
    .update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]))
    .digest('base64')}`;
}

/** A section of a markdown document: from its heading to the next heading of the same or a higher level. */
function section(document: string, heading: string, occurrence = 0): string {
  const lines = document.split('\n');
  const level = heading.match(/^#+/)?.[0].length ?? 0;
  let seen = -1;
  const start = lines.findIndex((line) => line.trim() === heading && ++seen === occurrence);
  if (start < 0) return '';
  const rest = lines.slice(start + 1);
  let fenced = false;
  const end = rest.findIndex((line) => {
    if (line.startsWith('```')) fenced = !fenced;
    return !fenced && /^#+ /.test(line) && (line.match(/^#+/)?.[0].length ?? 99) <= level;
  });
  return [lines[start], ...(end < 0 ? rest : rest.slice(0, end))].join('\n');
}
const webhooksDoc = () => readFileSync(join(root, 'docs', 'WEBHOOKS.md'), 'utf8');
const sdkDoc = () => readFileSync(join(root, 'docs', 'SDK.md'), 'utf8');

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  t = await startTestProduct({ HALLMARK_WEBHOOKS_ALLOW_PRIVATE: 'true', HALLMARK_WEBHOOK_POLL_MS: '50' });
  a = await brand('Maison A', '9506000', '09506000134352');
  b = await brand('Maison B', '9506001', '09506001234563');
  const types = ['scan.counterfeit', 'code.blocked', 'test'];
  hookA = ok(await api(a.key)('POST', '/webhooks/endpoints', { url: `${base}/a`, eventTypes: types }), 201);
  hookA2 = ok(await api(a.key)('POST', '/webhooks/endpoints', { url: `${base}/a2`, eventTypes: ['code.blocked'] }), 201);
  hookB = ok(await api(b.key)('POST', '/webhooks/endpoints', { url: `${base}/b`, eventTypes: types }), 201);
  hookATest = ok(await api(a.testKey)('POST', '/webhooks/endpoints', { url: `${base}/a-test`, eventTypes: ['test'] }), 201);

  // A forged link of each brand's GTIN: COUNTERFEIT, a scan.counterfeit to its owner.
  for (const owner of [a, b]) {
    const code = ok(await api(owner.key)('POST', '/code/generate', { gtin: owner.gtin, serialNumber: 'RX-1' }), 201);
    expect(ok(await api(owner.key)('POST', '/code/verify', { url: forgeLink(code.url) })).verdict).toBe('COUNTERFEIT');
  }
  ok(await api(a.key)('POST', '/blocklist', { gtin: a.gtin, serial: 'RX-2', kind: 'counterfeit', reason: blockReason }), 201);
  ok(await api(a.testKey)('POST', `/webhooks/endpoints/${hookATest.id}/test`), 202);

  counterfeitA = await delivered('A’s scan.counterfeit', (each) => each.path === '/a' && each.json.type === 'scan.counterfeit');
  blockedA = await delivered('A’s code.blocked', (each) => each.path === '/a' && each.json.type === 'code.blocked');
  blockedAatA2 = await delivered('A’s code.blocked at its second endpoint', (each) => each.path === '/a2');
  counterfeitB = await delivered('B’s scan.counterfeit', (each) => each.path === '/b' && each.json.type === 'scan.counterfeit');
  testA = await delivered('A’s test-environment test message', (each) => each.path === '/a-test');
  jwks = (await (await fetch(`${t.url}/.well-known/jwks.json`)).json()) as { keys: Json[] };
}, 120_000);

afterAll(async () => {
  receiver.closeAllConnections();
  receiver.close();
  await t?.stop();
});

describe('webhook receivers: the TypeScript and Python helpers against real and forged messages', () => {
  it('accepts a genuine scan.counterfeit and code.blocked in every spelling the docs allow (the control for every forgery below)', async () => {
    // SDK.md, Webhooks: with `secret` (the endpoint's whsec_ secret) a v1 must verify, with `jwks`,
    // `accountId` and `environment` the v1a must; "header names may be in any case", a `Headers`
    // object is read. WEBHOOKS.md: "any of its libraries verifies them". A secret without its
    // `whsec_` prefix is the same HMAC key (Standard Webhooks strips the prefix; both helpers say so).
    const cases: Case[] = [];
    for (const delivery of [counterfeitA, blockedA]) {
      const headers = headersOf(delivery);
      const name = delivery.json.type;
      const spellings: [string, Record<string, string>][] = [
        ['as received', headers],
        ['a fetch Headers (TypeScript), as received (Python)', headers],
        ['UPPER-CASE names', Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]))],
        [
          'Title-Case names',
          Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.replace(/(^|-)([a-z])/g, (m) => m.toUpperCase()), v])),
        ],
      ];
      const configs: [string, Omit<Options, 'nowMs'>][] = [
        ['secret', secretOnly(hookA.secret)],
        ['secret without whsec_', secretOnly(hookA.secret.slice('whsec_'.length))],
        ['key set', keySetOnly(a.accountId)],
        ['secret and key set', both(hookA.secret, a.accountId)],
      ];
      for (const [spelling, spelled] of spellings) {
        for (const [config, options] of configs) {
          cases.push({
            name: `${name}, ${spelling}, ${config}`,
            body: delivery.raw,
            headers: spelled,
            options: { ...options, nowMs: freshFor(delivery) },
            tsHeaders: spelling.startsWith('a fetch Headers') ? new Headers(spelled) : undefined,
          });
        }
      }
    }
    const judged = await judge(cases);
    expect(refusedBySome(judged), 'a genuine message refused').toEqual([]);
    expect(blockedA.json.data.reason).toBe(blockReason);
  });

  it('refuses a genuine message whose timestamp is outside the 5 minutes, past and future', async () => {
    // WEBHOOKS.md, webhook-timestamp: "Refuse ones far from your clock (the libraries allow 5 minutes)";
    // SDK.md: "The timestamp must be within 5 minutes". A captured message replayed 301 s later, and
    // one whose timestamp is 301 s ahead of the receiver's clock (a receiver whose clock lags, or a
    // message held back to be replayed when the clock catches up), are refused; 299 s either way is not.
    const cases: Case[] = [];
    for (const delivery of [counterfeitA, blockedA]) {
      const signed = timestampOf(delivery) * 1000;
      for (const [when, nowMs, accept] of [
        ['301 s later', signed + 301_000, false],
        ['301 s earlier (a timestamp from the future)', signed - 301_000, false],
        ['a day later', signed + 86_400_000, false],
        ['299 s later', signed + 299_000, true],
        ['299 s earlier', signed - 299_000, true],
      ] as const) {
        for (const [config, options] of [
          ['secret', secretOnly(hookA.secret)],
          ['key set', keySetOnly(a.accountId)],
        ] as const) {
          cases.push({
            name: `${delivery.json.type} ${when}, ${config} [${accept ? 'accept' : 'refuse'}]`,
            body: delivery.raw,
            headers: headersOf(delivery),
            options: { ...options, nowMs },
          });
        }
      }
      // The old signature under a fresh timestamp: the timestamp is signed.
      const restamped = { ...headersOf(delivery), 'webhook-timestamp': String(timestampOf(delivery) + 600) };
      cases.push({
        name: `${delivery.json.type} re-stamped 600 s later, secret [refuse]`,
        body: delivery.raw,
        headers: restamped,
        options: { ...secretOnly(hookA.secret), nowMs: (timestampOf(delivery) + 601) * 1000 },
      });
    }
    const judged = await judge(cases);
    const wrong = judged.filter(
      (each) => (each.ts.ok && each.py.ok) !== each.name.endsWith('[accept]') || each.ts.ok !== each.py.ok,
    );
    expect(wrong.map(show)).toEqual([]);
  });

  it('a replayed webhook-id: the helpers verify it again (they keep no ids), so the docs must tell the receiver to keep them', async () => {
    // WEBHOOKS.md, webhook-id: "Your idempotency key: delivery is at least once, so store the ids you
    // have handled and ignore a repeat." So a replay is the receiver's to catch, by id: the helpers are
    // stateless. What a careful receiver checks: (1) Hallmark's own replay keeps the webhook-id (so
    // dedup by id works) under a fresh timestamp and fresh signatures, and both helpers accept it, as
    // they accept the captured original again within the 5 minutes; (2) the same cause sent to another
    // endpoint of the account is refused by this endpoint's secret (v1 binds the endpoint), and
    // accepted by the key set alone, as WEBHOOKS.md says ("can replay one to another endpoint of the
    // same account within the 5 minutes"); (3) the docs a receiver reads for the helper, SDK.md's
    // Webhooks sections, say that the helper does not catch a replay and that the webhook-id is what
    // to keep: neither section mentions webhook-id, a replay or a repeat at all.
    const replayAsked = ok(
      await api(a.key)('POST', `/webhooks/endpoints/${hookA.id}/messages/${blockedA.headers['webhook-id']}/replay`),
      202,
    );
    expect(replayAsked).toBeTruthy();
    const again = await delivered(
      'the replayed code.blocked',
      (each) => each !== blockedA && each.path === '/a' && each.headers['webhook-id'] === blockedA.headers['webhook-id'],
    );
    expect(again.raw.equals(blockedA.raw), 'a replay sends the same body').toBe(true);
    const judged = await judge([
      {
        name: 'original, seen again 200 s later',
        body: blockedA.raw,
        headers: headersOf(blockedA),
        options: { ...both(hookA.secret, a.accountId), nowMs: (timestampOf(blockedA) + 200) * 1000 },
      },
      {
        name: 'Hallmark’s replay',
        body: again.raw,
        headers: headersOf(again),
        options: { ...both(hookA.secret, a.accountId), nowMs: freshFor(again) },
      },
    ]);
    expect(
      refusedBySome(judged),
      'the helpers are stateless: both are signatures the receiver must accept, then dedupe by id',
    ).toEqual([]);

    const crossEndpoint = await judge([
      {
        name: 'A2’s message at A, A’s secret [refuse]',
        body: blockedAatA2.raw,
        headers: headersOf(blockedAatA2),
        options: { ...secretOnly(hookA.secret), nowMs: freshFor(blockedAatA2) },
      },
      {
        name: 'A2’s message at A, A’s secret and key set [refuse]',
        body: blockedAatA2.raw,
        headers: headersOf(blockedAatA2),
        options: { ...both(hookA.secret, a.accountId), nowMs: freshFor(blockedAatA2) },
      },
    ]);
    expect(acceptedBySome(crossEndpoint), 'v1 binds a message to its endpoint').toEqual([]);
    // (The webhook-id is the cause's: the same at both endpoints, as in Svix. A receiver deduping by id
    // over several endpoints handles the event once.)

    expect(webhooksDoc()).toMatch(/store the ids you have handled and ignore a repeat/);
    const ts = section(sdkDoc(), '### Webhooks', 0);
    const py = section(sdkDoc(), '### Webhooks', 1);
    expect(ts).toContain('verifyWebhook');
    expect(py).toContain('verify_webhook');
    const missing = [
      ['TypeScript', ts],
      ['Python', py],
    ]
      .filter(([, text]) => !(/webhook-id/.test(text as string) && /replay|repeat|already handled|idempot/i.test(text as string)))
      .map(([language]) => `SDK.md, ${language} Webhooks: says nothing of replays or of keeping the webhook-id`);
    expect(missing, 'the helper docs do not tell the receiver that a verified message may be a replay').toEqual([]);
  });

  it('refuses the body re-serialised or re-encoded under the old signature (whitespace, key order, escapes, BOM, invalid UTF-8)', async () => {
    // WEBHOOKS.md: both signatures cover "the body exactly as received"; SDK.md: "Give it the body
    // exactly as received, not re-serialised JSON". So any other bytes, even ones that parse to the same
    // JSON, are refused: a receiver that hashes, stores or forwards the raw body it verified must be
    // able to trust that those bytes are what Hallmark signed. The TypeScript helper decodes the bytes
    // with a lenient TextDecoder (packages/sdk/src/webhooks.ts:190) and signs the re-encoded text, so a
    // leading UTF-8 BOM is dropped and an invalid byte becomes U+FFFD before the HMAC: bytes Hallmark
    // never sent verify. The Python helper signs the bytes as received and refuses them.
    const original = blockedA.raw;
    const text = original.toString('utf8');
    const parsed = JSON.parse(text) as Json;
    const reversed = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(reversed)
        : value && typeof value === 'object'
          ? Object.fromEntries(
              Object.entries(value as Json)
                .reverse()
                .map(([k, v]) => [k, reversed(v)]),
            )
          : value;
    const variants: [string, Buffer][] = [
      ['pretty-printed', Buffer.from(JSON.stringify(parsed, null, 2))],
      ['a trailing newline', Buffer.concat([original, Buffer.from('\n')])],
      ['keys in reverse order', Buffer.from(JSON.stringify(reversed(parsed)))],
      [
        'non-ASCII as \\u escapes',
        Buffer.from(text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)),
      ],
      ['slashes as \\/', Buffer.from(text.replaceAll('/', '\\/'))],
      ['a UTF-8 byte-order mark before it', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), original])],
    ];
    const replacement = Buffer.from('\uFFFD');
    const at = original.indexOf(replacement);
    expect(at, 'the delivered code.blocked carries the owner’s U+FFFD as UTF-8').toBeGreaterThan(0);
    variants.push([
      'the U+FFFD’s bytes replaced by one invalid byte 0xFF',
      Buffer.concat([original.subarray(0, at), Buffer.from([0xff]), original.subarray(at + replacement.length)]),
    ]);
    const cases: Case[] = [];
    for (const [name, body] of variants) {
      expect(body.equals(original), name).toBe(false);
      for (const [config, options] of [
        ['secret', secretOnly(hookA.secret)],
        ['key set', keySetOnly(a.accountId)],
      ] as const) {
        cases.push({
          name: `${name}, ${config}`,
          body,
          headers: headersOf(blockedA),
          options: { ...options, nowMs: freshFor(blockedA) },
        });
      }
    }
    const judged = await judge(cases);
    expect(crashes(judged)).toEqual([]);
    expect(acceptedBySome(judged), 'bytes Hallmark did not send verified').toEqual([]);
  });

  it('several signatures: one valid for another message does not vouch for this body; with both checks, both must hold for this body', async () => {
    // WEBHOOKS.md: both sign `<webhook-id>.<webhook-timestamp>.<body>`; a header holds several (one per
    // secret, then the v1a). A forger who captured every signature of message Y pastes them all beside
    // junk onto a body of his own, or onto another genuine message X: nothing there signs it. SDK.md:
    // "with both, both must verify": a v1 of this message beside a v1a of another one is refused when
    // the receiver asked for both (and the other way round). A valid signature among junk still counts
    // (Standard Webhooks: any listed signature), the control.
    const x = counterfeitA;
    const y = blockedA;
    const yAll = String(y.headers['webhook-signature']);
    const xSigs = signaturesOf(x);
    const ySigs = signaturesOf(y);
    const junk = `v1,${Buffer.alloc(32, 7).toString('base64')} v1a,${Buffer.alloc(64, 9).toString('base64')} v2,abc v1,`;
    const forgedBody = Buffer.from(y.raw.toString('utf8').replace('"counterfeit"', '"withdrawn"'));
    expect(forgedBody.equals(y.raw)).toBe(false);
    const fresh = { nowMs: freshFor(y) };
    const cases: Case[] = [
      {
        name: 'forged body, Y’s id and timestamp, all of Y’s signatures and junk, secret',
        body: forgedBody,
        headers: { ...headersOf(y), 'webhook-signature': `${junk} ${yAll}` },
        options: { ...secretOnly(hookA.secret), ...fresh },
      },
      {
        name: 'forged body, Y’s id and timestamp, all of Y’s signatures and junk, key set',
        body: forgedBody,
        headers: { ...headersOf(y), 'webhook-signature': `${junk} ${yAll}` },
        options: { ...keySetOnly(a.accountId), ...fresh },
      },
      {
        name: 'X’s body and headers, signatures Y’s, secret',
        body: x.raw,
        headers: { ...headersOf(x), 'webhook-signature': yAll },
        options: { ...secretOnly(hookA.secret), nowMs: freshFor(x) },
      },
      {
        name: 'X’s body and headers, signatures Y’s, key set',
        body: x.raw,
        headers: { ...headersOf(x), 'webhook-signature': yAll },
        options: { ...keySetOnly(a.accountId), nowMs: freshFor(x) },
      },
      {
        name: 'X: its v1, Y’s v1a, secret and key set',
        body: x.raw,
        headers: { ...headersOf(x), 'webhook-signature': [...xSigs.v1, ...ySigs.v1a].join(' ') },
        options: { ...both(hookA.secret, a.accountId), nowMs: freshFor(x) },
      },
      {
        name: 'X: Y’s v1, its v1a, secret and key set',
        body: x.raw,
        headers: { ...headersOf(x), 'webhook-signature': [...ySigs.v1, ...xSigs.v1a].join(' ') },
        options: { ...both(hookA.secret, a.accountId), nowMs: freshFor(x) },
      },
      {
        name: 'X: its v1 filed as v1a and its v1a as v1, secret and key set',
        body: x.raw,
        headers: {
          ...headersOf(x),
          'webhook-signature': [
            ...xSigs.v1.map((s) => s.replace('v1,', 'v1a,')),
            ...xSigs.v1a.map((s) => s.replace('v1a,', 'v1,')),
          ].join(' '),
        },
        options: { ...both(hookA.secret, a.accountId), nowMs: freshFor(x) },
      },
    ];
    const judged = await judge(cases);
    expect(crashes(judged)).toEqual([]);
    expect(acceptedBySome(judged), 'a signature of another message vouched for this one').toEqual([]);
    const control = await judge([
      {
        name: 'X: junk, Y’s signatures, then its own, secret and key set',
        body: x.raw,
        headers: { ...headersOf(x), 'webhook-signature': `${junk} ${yAll} ${x.headers['webhook-signature']}` },
        options: { ...both(hookA.secret, a.accountId), nowMs: freshFor(x) },
      },
    ]);
    expect(refusedBySome(control)).toEqual([]);
  });

  it('v1a: another account’s signing key, the test environment’s key and a key the account registered are all in the live key set, and none vouches', async () => {
    // WEBHOOKS.md, webhook-key-id: "accept it only if its hallmark_key_type is signing (the service's own
    // key, never a key an account registered), its hallmark_account is your account id and its
    // hallmark_environment the payload's environment"; SDK.md: a test endpoint (a test key can make
    // one) aimed at your live receiver delivers test messages its test key signed. The one published
    // set holds all of them, so each must be refused when the receiver checks the v1a of its live
    // account: B's genuine message (B's signing key), A's test-environment message (A's test signing
    // key), each under the kid of A's live key too, and a message forged by whoever holds the private
    // half of a key A registered (an HSM at a factory), which is in the set as A's, live, `public`.
    const kidOf = (delivery: Delivery) => String(delivery.headers['webhook-key-id']);
    const liveA = jwks.keys.find((key) => key.kid === kidOf(counterfeitA));
    const testKeyA = jwks.keys.find((key) => key.kid === kidOf(testA));
    expect(liveA).toMatchObject({ hallmark_account: a.accountId, hallmark_environment: 'live', hallmark_key_type: 'signing' });
    expect(testKeyA, 'the test signing key is in the same published set').toMatchObject({
      hallmark_account: a.accountId,
      hallmark_environment: 'test',
      hallmark_key_type: 'signing',
    });
    expect(testA.json.environment).toBe('test');

    // A key A registered, and a message forged with its private half.
    const pair = generateEd25519KeyPair();
    ok(await api(a.key)('POST', '/keys', publicKeyRegistration(pair, { accountId: a.accountId })), 201);
    const publishedSet = (await (await fetch(`${t.url}/.well-known/jwks.json`)).json()) as { keys: Json[] };
    const registered = publishedSet.keys.find((key) => key.x === pair.publicKey.toString('base64url'));
    expect(registered).toMatchObject({
      hallmark_account: a.accountId,
      hallmark_environment: 'live',
      hallmark_key_type: 'public',
    });
    const forgedBody = Buffer.from(
      JSON.stringify({
        type: 'code.blocked',
        timestamp: new Date(timestampOf(blockedA) * 1000).toISOString(),
        environment: 'live',
        data: { ...blockedA.json.data, serialFrom: 'RX-9', serialTo: 'RX-9', reason: 'forged' },
      }),
    );
    const forgedId = 'msg_forged0000000000000000000000';
    const forgedTs = String(timestampOf(blockedA));
    const forgedSig = signEd25519(
      null,
      Buffer.concat([Buffer.from(`${forgedId}.${forgedTs}.`), forgedBody]),
      ed25519PrivateKeyObject(pair),
    ).toString('base64');
    const forgedHeaders = {
      'webhook-id': forgedId,
      'webhook-timestamp': forgedTs,
      'webhook-signature': `v1a,${forgedSig}`,
      'webhook-key-id': String(registered?.kid),
    };
    const liveSet = { jwks: publishedSet, accountId: a.accountId, environment: 'live' as const };
    const testAsLive = Buffer.from(testA.raw.toString('utf8').replace('"environment":"test"', '"environment":"live"'));
    expect(testAsLive.equals(testA.raw)).toBe(false);
    const cases: Case[] = [
      {
        name: 'B’s genuine message, checked as A',
        body: counterfeitB.raw,
        headers: headersOf(counterfeitB),
        options: { ...liveSet, nowMs: freshFor(counterfeitB) },
      },
      {
        name: 'B’s genuine message, kid changed to A’s live key',
        body: counterfeitB.raw,
        headers: { ...headersOf(counterfeitB), 'webhook-key-id': kidOf(counterfeitA) },
        options: { ...liveSet, nowMs: freshFor(counterfeitB) },
      },
      {
        name: 'A’s test-environment message at a live receiver',
        body: testA.raw,
        headers: headersOf(testA),
        options: { ...liveSet, nowMs: freshFor(testA) },
      },
      {
        name: 'A’s test message, kid changed to A’s live key',
        body: testA.raw,
        headers: { ...headersOf(testA), 'webhook-key-id': kidOf(counterfeitA) },
        options: { ...liveSet, nowMs: freshFor(testA) },
      },
      {
        name: 'A’s test message, its body saying live',
        body: testAsLive,
        headers: headersOf(testA),
        options: { ...liveSet, nowMs: freshFor(testA) },
      },
      {
        name: 'forged with A’s registered (public) key',
        body: forgedBody,
        headers: forgedHeaders,
        options: { ...liveSet, nowMs: freshFor(blockedA) },
      },
      {
        name: 'forged with A’s registered key, kid changed to A’s live signing key',
        body: forgedBody,
        headers: { ...forgedHeaders, 'webhook-key-id': kidOf(counterfeitA) },
        options: { ...liveSet, nowMs: freshFor(blockedA) },
      },
    ];
    const judged = await judge(cases);
    expect(crashes(judged)).toEqual([]);
    expect(acceptedBySome(judged), 'a v1a under a key that is not A’s live signing key vouched').toEqual([]);
    // Controls: each is genuine for its own account and environment.
    const controls = await judge([
      {
        name: 'B’s message, checked as B',
        body: counterfeitB.raw,
        headers: headersOf(counterfeitB),
        options: { jwks: publishedSet, accountId: b.accountId, environment: 'live', nowMs: freshFor(counterfeitB) },
      },
      {
        name: 'A’s test message at a test receiver',
        body: testA.raw,
        headers: headersOf(testA),
        options: { jwks: publishedSet, accountId: a.accountId, environment: 'test', nowMs: freshFor(testA) },
      },
    ]);
    expect(refusedBySome(controls)).toEqual([]);
  });

  it('v1: another endpoint’s secret (another account’s, or the test endpoint a test key made) and an empty or unset secret vouch for nothing', async () => {
    // WEBHOOKS.md: v1 is the HMAC "under each live secret" of the endpoint; SDK.md: an empty secret
    // ("" or "whsec_", as an unset variable gives) is refused, "anyone can sign under an empty key".
    // A test key of A can make a test endpoint and so knows its secret: the messages it makes carry
    // v1 under that secret only, which A's live receiver must refuse.
    const fresh = (delivery: Delivery) => ({ nowMs: freshFor(delivery) });
    const emptyKeyForgery = Buffer.from(
      JSON.stringify({ type: 'scan.counterfeit', timestamp: new Date().toISOString(), environment: 'live', data: {} }),
    );
    const emptyId = 'msg_empty000000000000000000000000';
    const emptyTs = String(timestampOf(counterfeitA));
    const emptySig = v1Of('whsec_', emptyId, emptyTs, emptyKeyForgery);
    const cases: Case[] = [
      {
        name: 'A’s message, B’s secret',
        body: counterfeitA.raw,
        headers: headersOf(counterfeitA),
        options: { ...secretOnly(hookB.secret), ...fresh(counterfeitA) },
      },
      {
        name: 'A’s message, A2’s secret',
        body: counterfeitA.raw,
        headers: headersOf(counterfeitA),
        options: { ...secretOnly(hookA2.secret), ...fresh(counterfeitA) },
      },
      {
        name: 'A’s test-endpoint message at A’s live endpoint’s secret',
        body: testA.raw,
        headers: headersOf(testA),
        options: { ...secretOnly(hookA.secret), ...fresh(testA) },
      },
      {
        name: 'a message signed under an empty key, secret ""',
        body: emptyKeyForgery,
        headers: { 'webhook-id': emptyId, 'webhook-timestamp': emptyTs, 'webhook-signature': emptySig },
        options: { secret: '', ...fresh(counterfeitA) },
      },
      {
        name: 'a message signed under an empty key, secret "whsec_"',
        body: emptyKeyForgery,
        headers: { 'webhook-id': emptyId, 'webhook-timestamp': emptyTs, 'webhook-signature': emptySig },
        options: { secret: 'whsec_', ...fresh(counterfeitA) },
      },
      {
        name: 'a message signed under an empty key, secrets [A’s, ""]',
        body: emptyKeyForgery,
        headers: { 'webhook-id': emptyId, 'webhook-timestamp': emptyTs, 'webhook-signature': emptySig },
        options: { secret: [hookA.secret, ''], ...fresh(counterfeitA) },
      },
      {
        name: 'A’s message, secret WHSEC_ in capitals',
        body: counterfeitA.raw,
        headers: headersOf(counterfeitA),
        options: { secret: hookA.secret.replace('whsec_', 'WHSEC_'), ...fresh(counterfeitA) },
      },
    ];
    const judged = await judge(cases);
    expect(crashes(judged)).toEqual([]);
    expect(acceptedBySome(judged), 'a secret that is not this endpoint’s vouched').toEqual([]);
  });

  it('an empty, blank, malformed or missing signature list is refused', async () => {
    // WEBHOOKS.md: `webhook-signature` is "v1,<base64 HMAC-SHA256> … v1a,<base64 Ed25519>"; SDK.md: it
    // throws / raises "otherwise". Nothing that is not a valid signature of this message counts: no
    // entry, a version without a signature, a signature under a version it does not know.
    const headers = headersOf(counterfeitA);
    const validV1 = (signaturesOf(counterfeitA).v1[0] as string).slice(3);
    const lists = [
      '',
      ' ',
      ',',
      ', ,',
      'v1',
      'v1,',
      'v1a,',
      'v1, v1a,',
      'v1,=',
      `v2,${validV1}`,
      `V1,${validV1}`,
      ` v1 ,${validV1}`,
      `v1;${validV1}`,
    ];
    const cases: Case[] = [];
    for (const list of lists) {
      for (const [config, options] of [
        ['secret', secretOnly(hookA.secret)],
        ['key set', keySetOnly(a.accountId)],
        ['both', both(hookA.secret, a.accountId)],
      ] as const) {
        cases.push({
          name: `${JSON.stringify(list)}, ${config}`,
          body: counterfeitA.raw,
          headers: { ...headers, 'webhook-signature': list },
          options: { ...options, nowMs: freshFor(counterfeitA) },
        });
      }
    }
    const { 'webhook-signature': _dropped, ...withoutSignature } = headers;
    cases.push({
      name: 'no webhook-signature header',
      body: counterfeitA.raw,
      headers: withoutSignature,
      options: { ...both(hookA.secret, a.accountId), nowMs: freshFor(counterfeitA) },
    });
    const { 'webhook-key-id': _kid, ...withoutKid } = headers;
    cases.push({
      name: 'no webhook-key-id, key set',
      body: counterfeitA.raw,
      headers: withoutKid,
      options: { ...keySetOnly(a.accountId), nowMs: freshFor(counterfeitA) },
    });
    const judged = await judge(cases);
    expect(crashes(judged)).toEqual([]);
    expect(acceptedBySome(judged)).toEqual([]);
  });

  it('a forged message is refused as a forgery (WebhookVerificationError), never as a misconfiguration (ValueError), whatever its header bytes', async () => {
    // SDK.md, Python Webhooks: verify_webhook "raises WebhookVerificationError (a HallmarkError)
    // otherwise, and ValueError for a misconfiguration: neither a secret nor a key set, …". A receiver
    // answers the first with 401 and treats the second as its own bug (a 500, an alert). Anyone can
    // post to the receiver, and Python's HTTP servers (http.server, WSGI) hand header bytes over as
    // latin-1 text, so a `webhook-signature: v1,\xe9…` arrives as "v1,é…". base64.b64decode(…,
    // validate=True) raises a plain ValueError for non-ASCII text, not binascii.Error, which is all
    // _signatures catches (clients/python/hallmark/webhook_signature.py:56-66): the forged header
    // escapes as a "misconfiguration". TypeScript refuses each with its WebhookVerificationError.
    const headers = headersOf(counterfeitA);
    const { v1, v1a } = signaturesOf(counterfeitA);
    const fresh = { nowMs: freshFor(counterfeitA) };
    // A body of the forger's (one byte more), so that no signature of the header vouches for it.
    const forgedBody = Buffer.concat([counterfeitA.raw, Buffer.from(' ')]);
    const variants: [string, Record<string, string>][] = [
      [
        'a v1 entry holding a latin-1 byte',
        { ...headers, 'webhook-signature': `v1,\u00e9${(v1[0] as string).slice(4)} ${v1a.join(' ')}` },
      ],
      [
        'a v1a entry holding a latin-1 byte',
        { ...headers, 'webhook-signature': `${v1.join(' ')} v1a,\u00e9${(v1a[0] as string).slice(5)}` },
      ],
      ['only a latin-1 entry', { ...headers, 'webhook-signature': 'v1,\u00ff\u00fe' }],
      ['a webhook-id holding a latin-1 byte', { ...headers, 'webhook-id': `${headers['webhook-id']}\u00e9` }],
      ['a 5,000-digit timestamp', { ...headers, 'webhook-timestamp': '1'.repeat(5000) }],
      [
        'a timestamp in full-width digits',
        {
          ...headers,
          'webhook-timestamp': [...String(timestampOf(counterfeitA))]
            .map((d) => String.fromCharCode(0xff10 + Number(d)))
            .join(''),
        },
      ],
    ];
    const cases: Case[] = [];
    for (const [name, spelled] of variants) {
      for (const [config, options] of [
        ['secret', secretOnly(hookA.secret)],
        ['key set', keySetOnly(a.accountId)],
        ['both', both(hookA.secret, a.accountId)],
      ] as const) {
        cases.push({ name: `${name}, ${config}`, body: forgedBody, headers: spelled, options: { ...options, ...fresh } });
      }
    }
    const judged = await judge(cases);
    expect(crashes(judged)).toEqual([]);
    expect(acceptedBySome(judged)).toEqual([]);
    const misfiled = judged
      .filter(
        (each) =>
          !each.py.error?.startsWith('WebhookVerificationError') || !each.ts.error?.startsWith('WebhookVerificationError'),
      )
      .map(show);
    expect(misfiled, 'a forged message reported as a misconfiguration').toEqual([]);
  });

  it('a 1 MB webhook-signature header of forged entries is refused by both, with a bounded number of signature checks', async () => {
    // Anyone can post to a receiver's URL; the timestamp, id and key-id are not secret, so a forger can
    // pass every check that comes before the signatures (a fresh timestamp, A's live kid, a body saying
    // "live"). A careful receiver expects the helper to refuse a forged message for about the work a
    // genuine one takes: Standard Webhooks senders put a handful of entries in the header (Hallmark at
    // most 3: WEBHOOKS.md, "two during a rotation" and one v1a), so a few checks per configured secret
    // and key. Both helpers instead run one check per entry of whatever header they are handed (the
    // TypeScript one with a key import each: packages/sdk/src/webhooks.ts:210-219; Python:
    // webhook_signature.py:150-152 and _signatures), so the work grows with the header. The bound asked
    // here is 16 checks per message. (Node's own HTTP server caps headers at 16 KiB by default, some
    // 120 entries, which bounds it in front of a plain Node receiver; the helpers take any headers.)
    const v1Entry = `v1,${Buffer.alloc(32, 1).toString('base64')}`;
    const v1aEntry = `v1a,${Buffer.alloc(64, 2).toString('base64')}`;
    const entries: string[] = [];
    let size = 0;
    for (let n = 0; size < 1_048_576; n++) {
      const entry = n % 2 === 0 ? v1Entry : v1aEntry;
      entries.push(entry);
      size += entry.length + 1;
    }
    const huge = entries.join(' ');
    const headers = { ...headersOf(counterfeitA), 'webhook-signature': huge };
    const cases: Case[] = [
      {
        name: '1 MB of forged entries, secret',
        body: counterfeitA.raw,
        headers,
        options: { ...secretOnly(hookA.secret), nowMs: freshFor(counterfeitA) },
      },
      {
        name: '1 MB of forged entries, key set',
        body: counterfeitA.raw,
        headers,
        options: { ...keySetOnly(a.accountId), nowMs: freshFor(counterfeitA) },
      },
    ];
    const judged = await judge(cases);
    expect(crashes(judged)).toEqual([]);
    expect(acceptedBySome(judged)).toEqual([]);
    const unbounded = judged
      .flatMap((each) => [[`${each.name}, TypeScript`, each.ts] as const, [`${each.name}, Python`, each.py] as const])
      .filter(([, verdict]) => (verdict.checks ?? 0) > 16)
      .map(
        ([name, verdict]) =>
          `${name}: ${verdict.checks} signature checks, ${Math.round(verdict.ms)} ms, for ${entries.length} entries`,
      );
    expect(unbounded, 'one signature check per forged entry, unbounded').toEqual([]);
  }, 60_000);

  it('rotation: the old secret verifies during the grace only; after previousSecretExpiresAt the docs must tell the receiver to drop it', async () => {
    // WEBHOOKS.md, rotate-secret: "For 24 h (previousSecretExpiresAt …) every message carries a v1
    // signature under each secret, so you can deploy the new one without losing a message". SDK.md: a
    // secret "or any of several, during a rotation". So: during the grace a receiver with the old
    // secret, the new one, or both accepts; after it Hallmark signs under the new one alone, and a
    // receiver still holding only the old one refuses. But the helpers know no expiry: a receiver that
    // configured both keeps accepting a v1 under the old secret for as long as it keeps it, and a
    // secret is rotated because it leaked. The docs a receiver reads for the helper must say to drop
    // the old secret at previousSecretExpiresAt (neither the TypeScript nor the Python section does),
    // or the helper must take the expiry.
    const hook = ok(await api(a.key)('POST', '/webhooks/endpoints', { url: `${base}/rot`, eventTypes: ['test'] }), 201);
    const oldSecret = hook.secret as string;
    const rotated = ok(
      await api(a.key)('POST', `/webhooks/endpoints/${hook.id}/rotate-secret`, undefined, {
        'idempotency-key': `rotate-${hook.id}`,
      }),
    );
    const newSecret = rotated.secret as string;
    expect(newSecret).not.toBe(oldSecret);
    const expiresAt = Date.parse(rotated.previousSecretExpiresAt);
    expect(expiresAt - t.clock.now().getTime()).toBeGreaterThan(23 * 3_600_000);
    expect(ok(await api(a.key)('GET', `/webhooks/endpoints/${hook.id}`)).previousSecretExpiresAt).toBe(
      rotated.previousSecretExpiresAt,
    );

    const during = ok(await api(a.key)('POST', `/webhooks/endpoints/${hook.id}/test`), 202);
    const inGrace = await delivered('the test in the grace', (each) => each.headers['webhook-id'] === during.id);
    expect(signaturesOf(inGrace).v1).toHaveLength(2);

    const shift = expiresAt - t.clock.now().getTime() + 60_000;
    t.clock.advance(shift);
    const afterGrace = await (async () => {
      try {
        const after = ok(await api(a.key)('POST', `/webhooks/endpoints/${hook.id}/test`), 202);
        return await delivered('the test after the grace', (each) => each.headers['webhook-id'] === after.id);
      } finally {
        t.clock.advance(-shift);
      }
    })();
    // (webhook-timestamp is the wall clock, Date.now(): compliance-service worker.ts:231; the product's
    // clock, moved here, chooses the secrets.)
    expect(signaturesOf(afterGrace).v1, 'after the grace only the new secret signs').toHaveLength(1);

    // Someone holding the old (leaked) secret signs a message of his own after the grace.
    const forgedBody = Buffer.from(JSON.stringify({ ...afterGrace.json, data: { ...afterGrace.json.data, message: 'forged' } }));
    const forgedHeaders = {
      'webhook-id': 'msg_oldsecret00000000000000000000',
      'webhook-timestamp': String(timestampOf(afterGrace)),
      'webhook-signature': v1Of(oldSecret, 'msg_oldsecret00000000000000000000', String(timestampOf(afterGrace)), forgedBody),
    };
    const judged = await judge([
      {
        name: 'in the grace, old secret [accept]',
        body: inGrace.raw,
        headers: headersOf(inGrace),
        options: { secret: oldSecret, nowMs: freshFor(inGrace) },
      },
      {
        name: 'in the grace, new secret [accept]',
        body: inGrace.raw,
        headers: headersOf(inGrace),
        options: { secret: newSecret, nowMs: freshFor(inGrace) },
      },
      {
        name: 'in the grace, both [accept]',
        body: inGrace.raw,
        headers: headersOf(inGrace),
        options: { secret: [oldSecret, newSecret], nowMs: freshFor(inGrace) },
      },
      {
        name: 'after the grace, old secret [refuse]',
        body: afterGrace.raw,
        headers: headersOf(afterGrace),
        options: { secret: oldSecret, nowMs: freshFor(afterGrace) },
      },
      {
        name: 'after the grace, new secret [accept]',
        body: afterGrace.raw,
        headers: headersOf(afterGrace),
        options: { secret: newSecret, nowMs: freshFor(afterGrace) },
      },
      {
        name: 'after the grace, both [accept]',
        body: afterGrace.raw,
        headers: headersOf(afterGrace),
        options: { secret: [newSecret, oldSecret], nowMs: freshFor(afterGrace) },
      },
      {
        name: 'after the grace, forged under the old secret, new secret alone [refuse]',
        body: forgedBody,
        headers: forgedHeaders,
        options: { secret: newSecret, nowMs: freshFor(afterGrace) },
      },
    ]);
    const wrong = judged.filter(
      (each) => each.ts.ok !== each.name.endsWith('[accept]') || each.py.ok !== each.name.endsWith('[accept]'),
    );
    expect(wrong.map(show)).toEqual([]);

    // What the helpers do with both secrets still configured after the grace: they cannot know.
    const stale = await judge([
      {
        name: 'after the grace, forged under the old secret, both still configured',
        body: forgedBody,
        headers: forgedHeaders,
        options: { secret: [newSecret, oldSecret], nowMs: freshFor(afterGrace) },
      },
    ]);
    expect(
      stale.map((each) => [each.ts.ok, each.py.ok]),
      'the helpers take no expiry: both accept it',
    ).toEqual([[true, true]]);
    const ts = section(sdkDoc(), '### Webhooks', 0);
    const py = section(sdkDoc(), '### Webhooks', 1);
    const told = [
      ['SDK.md, TypeScript Webhooks', ts],
      ['SDK.md, Python Webhooks', py],
    ]
      .filter(([, text]) => !/previousSecretExpiresAt/.test(text as string))
      .map(([where]) => `${where}: never says to drop the old secret at previousSecretExpiresAt`);
    expect(told, 'a receiver keeps the leaked secret configured, and the helper keeps accepting it').toEqual([]);
  }, 30_000);

  it('the docs’ own receiver examples verify a genuine message (and refuse a changed one)', async () => {
    // SDK.md, Python Webhooks, gives the call to copy:
    //   verify_webhook(request_body, request_headers, secret=webhook_secret, jwks=jwks, account_id=account_id)
    // and says `environment` is required with jwks ("both required with it"): the example omits it, so
    // a receiver that copies it gets a ValueError on every message, genuine ones included.
    // WEBHOOKS.md's standard-library `verify` must answer True for a genuine message and False for a
    // changed body (here with the receiver's clock being the product's: the message was just signed).
    const sdkPython = section(sdkDoc(), '### Webhooks', 1);
    const example = sdkPython.match(/```python\n([\s\S]*?)```/)?.[1];
    expect(example, 'SDK.md’s Python Webhooks section has an example').toBeDefined();
    const docPython = section(webhooksDoc(), '## Verifying a message').match(/```python\n([\s\S]*?)```/)?.[1];
    expect(docPython, 'WEBHOOKS.md has a Python example').toBeDefined();
    const program = `
import base64, json, sys
case = json.load(sys.stdin)
request_body = base64.b64decode(case["body"])
request_headers = case["headers"]
webhook_secret = case["secret"]
jwks = case["jwks"]
account_id = case["account_id"]
results = {}
try:
${(example as string)
  .split('\n')
  .map((line) => `    ${line}`)
  .join('\n')}
    results["sdk_example"] = "ok: " + message["type"]
except Exception as error:
    results["sdk_example"] = type(error).__name__ + ": " + str(error)
${docPython}
results["webhooks_md_genuine"] = verify(webhook_secret, request_headers, request_body)
results["webhooks_md_changed"] = verify(webhook_secret, request_headers, request_body + b" ")
try:
    results["webhooks_md_latin1_signature"] = verify(webhook_secret, {**request_headers, "webhook-signature": "v1,\u00e9"}, request_body)
except Exception as error:
    results["webhooks_md_latin1_signature"] = type(error).__name__ + ": " + str(error)
json.dump(results, sys.stdout)
`;
    // A fresh message, so WEBHOOKS.md's verify (which reads time.time()) sees it within 5 minutes.
    const queued = ok(await api(a.key)('POST', `/webhooks/endpoints/${hookA.id}/test`), 202);
    const delivery = await delivered('a fresh test message', (each) => each.headers['webhook-id'] === queued.id);
    const { code, stdout, stderr } = await runPython(
      program,
      JSON.stringify({
        body: delivery.raw.toString('base64'),
        headers: headersOf(delivery),
        secret: hookA.secret,
        jwks,
        account_id: a.accountId,
      }),
    );
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      sdk_example: 'ok: test',
      webhooks_md_genuine: true,
      webhooks_md_changed: false,
      webhooks_md_latin1_signature: false,
    });
  });

  it('parity: every genuine message re-spelled as a receiver might hand it over is judged the same by both helpers', async () => {
    // SDK.md, Python Webhooks: "The TypeScript verifyWebhook refuses the same". A brand that runs both
    // (a Node gateway and a Python worker, say) or moves from one to the other must get one verdict per
    // message. The differences found (each is one helper more lenient than the other):
    // - base64 without its padding ("=" or "==" dropped from a signature): TypeScript's atob is
    //   forgiving (packages/sdk/src/webhooks.ts:70-79) and accepts; Python decodes with validate=True
    //   (webhook_signature.py:63) and skips the entry, so refuses.
    // - a secret read from a file with its trailing newline, or without its "=": TypeScript's atob
    //   drops whitespace and takes missing padding; Python raises ValueError on every message.
    // - the receiver's clock 300.5 s after the timestamp: TypeScript floors "now" to whole seconds
    //   (webhooks.ts:186: 300 s, accepted), Python compares the exact time (300.5 > 300, refused).
    // (The byte-order mark and invalid UTF-8 of the re-serialisation test above differ too.)
    const cases: Case[] = [];
    for (const delivery of [counterfeitA, blockedA]) {
      const headers = headersOf(delivery);
      const name = delivery.json.type;
      const { v1, v1a } = signaturesOf(delivery);
      const unpadded = (entries: string[]) => entries.map((entry) => entry.replace(/=+$/, ''));
      const signed = timestampOf(delivery) * 1000;
      cases.push(
        {
          name: `${name}, v1 without its base64 padding, secret`,
          body: delivery.raw,
          headers: { ...headers, 'webhook-signature': [...unpadded(v1), ...v1a].join(' ') },
          options: { ...secretOnly(hookA.secret), nowMs: freshFor(delivery) },
        },
        {
          name: `${name}, v1a without its base64 padding, key set`,
          body: delivery.raw,
          headers: { ...headers, 'webhook-signature': [...v1, ...unpadded(v1a)].join(' ') },
          options: { ...keySetOnly(a.accountId), nowMs: freshFor(delivery) },
        },
        {
          name: `${name}, secret with a trailing newline`,
          body: delivery.raw,
          headers,
          options: { secret: `${hookA.secret}\n`, nowMs: freshFor(delivery) },
        },
        {
          name: `${name}, secret without its "="`,
          body: delivery.raw,
          headers,
          options: { secret: hookA.secret.replace(/=+$/, ''), nowMs: freshFor(delivery) },
        },
        {
          name: `${name}, receiver 300.5 s after the timestamp`,
          body: delivery.raw,
          headers,
          options: { ...secretOnly(hookA.secret), nowMs: signed + 300_500 },
        },
        {
          name: `${name}, receiver 300.5 s before the timestamp`,
          body: delivery.raw,
          headers,
          options: { ...secretOnly(hookA.secret), nowMs: signed - 300_500 },
        },
        {
          name: `${name}, two signature lines joined with ", "`,
          body: delivery.raw,
          headers: { ...headers, 'webhook-signature': `${v1a.join(' ')}, ${v1.join(' ')}` },
          options: { ...both(hookA.secret, a.accountId), nowMs: freshFor(delivery) },
        },
      );
    }
    const judged = await judge(cases);
    expect(crashes(judged)).toEqual([]);
    expect(disagreements(judged), 'TypeScript and Python judge these messages differently').toEqual([]);
  });
});
