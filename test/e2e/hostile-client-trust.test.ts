import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ComplianceExportDocument, JsonWebKeySet } from '@hallmark/client';
import { ed25519Thumbprint } from '@hallmark/crypto';
import { leafHash, referenceInclusionProof, referenceRoot } from '@hallmark/merkle';
import { hashProvenanceRecord, leafInputOf, signCheckpoint } from '@hallmark/provenance';
import { Hallmark } from '@hallmark/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { auditVerdicts } from '../support/auditors.ts';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// A review (2026-12-06) of the libraries that are meant to check Hallmark without trusting it, from the
// side of a server, proxy or network that lies to them, and of a brand handing an auditor an export:
//
// - the TypeScript SDK (`packages/sdk`) against a hostile HTTP server on 127.0.0.1: a redirect to
//   another origin (the API key must not follow it), a Retry-After of a year or negative (no sleep
//   for ever), a truncated body or an HTML page with 200 (never handed back as data), and list pages
//   whose `pagination` is not what the API writes (docs/SDK.md, Lists and Errors: "a page whose next
//   cursor was sent before ... throws InvalidResponseError rather than fetch the same pages for
//   ever"; "A 2xx that is not what the operation answers is an InvalidResponseError");
// - the offline auditors (`auditExportText` in packages/client, `hallmark audit`, Python's
//   `audit_export`) against a GENUINE export of the embedded product, tampered: docs/COMPLIANCE.md
//   says "changing, dropping or adding any event breaks a proof or the count", and refuses a file
//   that "says two histories" (a member named twice). Here one event's evidence holds a whole number
//   past 2^53 (a certificate number); the forged file names another certificate, and every auditor
//   parsed it to the same double, hashed that, and called the forgery valid, though Python's `json`
//   (which the Python auditor itself parses with), Java's BigDecimal and a person read the other
//   number. Also checked: an event dropped from the middle with the chain and the proofs rebuilt,
//   a checkpoint's signature replayed over another checkpoint's text, one signed by an outsider's key
//   under the genuine key name, and a leaf index past the signed size.
//
// Found by this review and fixed: the SDK followed a next cursor that was not text for ever (sent as
// the same `cursor=[object Object]` each time; the server here stops it at 20 pages) and threw a
// TypeError for a list answer without `pagination` (packages/sdk/src/api-promise.ts, cursorOf); and
// every auditor called the certificate-number forgery valid (now a whole number written otherwise
// than JavaScript writes its double makes the file invalid: @hallmark/provenance firstRoundedInteger,
// and the Python auditor's parse_int). Child processes and requests are
// bounded in count and time; all traffic is to 127.0.0.1.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;
type Export = ComplianceExportDocument;

type Handler = (request: IncomingMessage, response: ServerResponse, index: number) => void;

/** A loopback server answering as `handler` says; `count` is the number of requests it received. */
async function hostileServer(): Promise<{ server: Server; url: string; count: () => number; handle: (h: Handler) => void }> {
  let handler: Handler = (_request, response) => response.end();
  let count = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => handler(request, response, count++));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    count: () => count,
    handle: (next) => {
      handler = next;
      count = 0;
    },
  };
}

const closeServer = async (server: Server) => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
};

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
};

/** What a call came to: the error's class and code, or "resolved". */
const outcome = (call: PromiseLike<unknown>) =>
  Promise.resolve(call).then(
    () => 'resolved',
    (error: Error & { code?: string }) => `${error.constructor.name}${error.code ? ` ${error.code}` : ''}`,
  );

describe('the SDK against a hostile server', () => {
  let hostile: Awaited<ReturnType<typeof hostileServer>>;
  let elsewhere: Awaited<ReturnType<typeof hostileServer>>;
  const apiKey = 'svc_live_review_secret_key';
  const clients = () =>
    [
      ['node:http', new Hallmark({ baseUrl: hostile.url, apiKey, maxRetries: 1, timeout: 5_000 })],
      ['fetch', new Hallmark({ baseUrl: hostile.url, apiKey, maxRetries: 1, timeout: 5_000, fetch: globalThis.fetch })],
    ] as const;

  beforeAll(async () => {
    hostile = await hostileServer();
    elsewhere = await hostileServer();
  });
  afterAll(async () => {
    await closeServer(hostile.server);
    await closeServer(elsewhere.server);
  });
  afterEach(() => {
    hostile.handle((_request, response) => response.end());
    elsewhere.handle((_request, response) => response.end());
  });

  it('sends the API key to no other origin: a 307/308 to another host is an error, not followed', async () => {
    const keysSeenElsewhere: string[] = [];
    elsewhere.handle((request, response) => {
      keysSeenElsewhere.push(String(request.headers['x-api-key']));
      json(response, 200, { keys: [], pagination: { nextCursor: null, hasMore: false } });
    });
    for (const status of [307, 308]) {
      hostile.handle((_request, response) => {
        response.writeHead(status, { location: `${elsewhere.url}/api/v1/keys` });
        response.end();
      });
      for (const [transport, client] of clients()) {
        expect(`${transport} ${status}: ${await outcome(client.keys.list())}`).toBe(
          `${transport} ${status}: APIError HTTP_${status}`,
        );
      }
    }
    expect(keysSeenElsewhere).toEqual([]);
  });

  it('does not sleep out a Retry-After of a year or a far date (thrown at once); a negative one is no wait', async () => {
    const farDate = new Date(Date.now() + 365 * 86_400_000).toUTCString();
    for (const retryAfter of ['31536000', farDate, '1e308']) {
      hostile.handle((_request, response) =>
        json(response, 429, { error: { code: 'RATE_LIMITED', message: 'slow down' } }, { 'retry-after': retryAfter }),
      );
      for (const [transport, client] of clients()) {
        const started = Date.now();
        const got = await outcome(client.keys.list());
        expect({ transport, retryAfter, got, requests: hostile.count(), quick: Date.now() - started < 3_000 }).toEqual({
          transport,
          retryAfter,
          got: 'RateLimitedError RATE_LIMITED',
          requests: 1,
          quick: true,
        });
        hostile.handle((_request, response) =>
          json(response, 429, { error: { code: 'RATE_LIMITED', message: 'slow down' } }, { 'retry-after': retryAfter }),
        );
      }
    }
    hostile.handle((_request, response, index) =>
      index === 0
        ? json(response, 503, { error: { code: 'SERVICE_UNAVAILABLE', message: 'busy' } }, { 'retry-after': '-31536000' })
        : json(response, 200, { keys: [], pagination: { nextCursor: null, hasMore: false } }),
    );
    const [, client] = clients()[0];
    const started = Date.now();
    expect(await outcome(client.keys.list())).toBe('resolved');
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('never hands back a truncated body or a 200 HTML page as the answer', async () => {
    hostile.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '4000' });
      response.write('{"keys":[{"id":"key_1"}],"pagination":{"nextCursor":null,');
      setTimeout(() => response.destroy(), 20);
    });
    for (const [transport, client] of clients()) {
      expect(`${transport}: ${await outcome(client.keys.list({}, { maxRetries: 0 }))}`).toBe(`${transport}: APIConnectionError`);
    }
    hostile.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html><body>Please log in to the hotel Wi-Fi</body></html>');
    });
    for (const [transport, client] of clients()) {
      expect(`${transport}: ${await outcome(client.keys.list())}`).toBe(`${transport}: InvalidResponseError INVALID_RESPONSE`);
    }
  });

  it('refuses a list whose next cursor is not a string rather than fetch the same page for ever', async () => {
    // Each page says "more, at cursor {}" (or ["x"]): sent as the same `cursor=[object Object]` (or
    // `cursor=x`) every time, but a new object each time, so the SDK's Set of sent cursors never
    // sees it again. The server ends the loop itself after 20 pages; the SDK should stop at once.
    const limit = 20;
    const results: Array<{ nextCursor: unknown; got: string; requests: number }> = [];
    const stoppedAtOnce = {
      nextCursor: expect.anything(),
      got: 'InvalidResponseError INVALID_RESPONSE',
      requests: expect.any(Number),
    };
    for (const nextCursor of [{}, ['x'], 7]) {
      hostile.handle((_request, response, index) =>
        json(response, 200, {
          keys: [{ id: `key_${index}` }],
          pagination: index < limit ? { nextCursor, hasMore: true } : { nextCursor: null, hasMore: false },
        }),
      );
      const [, client] = clients()[0];
      const iterate = async () => {
        for await (const _key of client.keys.list()) {
          // reading every item, as a caller would
        }
      };
      const got = await outcome(iterate());
      results.push({ nextCursor, got, requests: hostile.count() });
    }
    // The SDK's error, after at most 2 requests (the first page and the next, whose cursor repeats).
    expect(results).toEqual([stoppedAtOnce, stoppedAtOnce, stoppedAtOnce]);
    expect(results.map(({ requests }) => requests <= 2)).toEqual([true, true, true]);
  });

  it('a list answer with no `pagination` (or `null`) is an InvalidResponseError, not a TypeError', async () => {
    const results: string[] = [];
    for (const body of [{ keys: [{ id: 'key_1' }] }, null]) {
      hostile.handle((_request, response) => json(response, 200, body));
      const [, client] = clients()[0];
      const iterate = async () => {
        for await (const _key of client.keys.list()) {
          // as above
        }
      };
      results.push(`${JSON.stringify(body)}: ${await outcome(iterate())}`);
    }
    expect(results).toEqual([
      '{"keys":[{"id":"key_1"}]}: InvalidResponseError INVALID_RESPONSE',
      'null: InvalidResponseError INVALID_RESPONSE',
    ]);
  });
});

const hex = (buffer: Buffer) => buffer.toString('hex');

describe('the offline auditors against a genuine export, tampered', () => {
  let t: TestProduct;
  let folder: string;
  let jwks: JsonWebKeySet;
  let jwksPath: string;
  let before: string; // the export's text with three events (its checkpoint of size 3)
  let after: string; // … and with four (size 4)
  // A certificate number past 2^53: JSON.parse reads it, and this one's neighbour, as one double.
  const certificate = '90071992547409920';
  const forgedCertificate = '90071992547409921';

  const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
    call<Json>(t.url, method, `/api/v1${path}`, options);

  beforeAll(async () => {
    t = await startTestProduct();
    folder = await mkdtemp(join(tmpdir(), 'hallmark-client-trust-'));
    const operator = t.product.generatedOperatorKey as string;
    const created = await api('POST', '/accounts', { key: operator, body: { name: 'Auction house', tier: 'enterprise' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const house = created.body.apiKey.secret as string;
    const registered = await api('POST', '/auction/objects/register', {
      key: house,
      body: { title: 'Submariner 1680', category: 'watch', ownerId: 'client-jane' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const objectId = registered.body.object.id as string;
    const record = async (eventType: string, extra: Json = {}) => {
      const recorded = await call<Json>(t.url, 'POST', '/api/v1/auction/provenance/events', {
        key: house,
        body: { objectId, eventType, actorRole: 'auction_house', description: `${eventType} note`, ...extra },
      });
      expect(recorded.status, JSON.stringify(recorded.body)).toBe(201);
    };
    await record('cataloged');
    await record('condition_report', { evidence: { certificateNo: Number(certificate), finding: 'original dial' } });
    const exportText = (events: number) =>
      waitFor(`the ${events}-event export`, async () => {
        const response = await fetch(`${t.url}/api/v1/compliance/${objectId}/export?format=json`, {
          headers: { 'x-api-key': house },
        });
        const text = await response.text();
        return response.status === 200 && (JSON.parse(text) as Export).events.length === events ? text : undefined;
      });
    before = await exportText(3);
    await record('listed');
    after = await exportText(4);
    const keySet = await fetch(`${t.url}/.well-known/jwks.json`);
    jwks = (await keySet.json()) as JsonWebKeySet;
    jwksPath = join(folder, 'jwks.json');
    await writeFile(jwksPath, JSON.stringify(jwks));
  }, 180_000);

  afterAll(async () => {
    await t?.stop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  /** The three auditors' verdicts on one file's text: TS auditExportText, `hallmark audit`, Python's audit_export. */
  const verdicts = (text: string) => auditVerdicts(text, { jwks, jwksPath }, folder);

  const valid = { ts: true, command: 0, python: true };
  const invalid = { ts: false, command: 1, python: false };

  it('the genuine exports audit valid everywhere, and the evidence holds the certificate number as written', async () => {
    expect(before).toContain(`"certificateNo":${certificate}`);
    expect(await verdicts(before)).toEqual(valid);
    expect(await verdicts(after)).toEqual(valid);
  }, 60_000);

  it('refuses an export whose evidence names another certificate number (a whole number past 2^53)', async () => {
    const forged = after.replace(`"certificateNo":${certificate}`, `"certificateNo":${forgedCertificate}`);
    expect(forged).not.toBe(after);
    // What the file says: a reader that keeps integers exactly (Python's json, as the Python auditor parses it) sees the forgery.
    expect(forged).toContain(forgedCertificate);
    expect(await verdicts(forged)).toEqual(invalid);
  }, 60_000);

  it('refuses an export whose evidence names another number that reads as the same double (a fraction, 2026-12-06)', async () => {
    // An attack on the evidence: `…921.000000001` is the double …920 (the same hash) to JavaScript and
    // to Python's json (a float), and …921.000000001 to a Decimal reader or a person; so is
    // 0.10000000000000001 beside 0.1. The service writes neither.
    for (const spelling of [`${forgedCertificate}.000000001`, `${certificate}.4`]) {
      const forged = after.replace(`"certificateNo":${certificate}`, `"certificateNo":${spelling}`);
      expect(forged).not.toBe(after);
      expect(await verdicts(forged), spelling).toEqual(invalid);
    }
    // A number written with the same value otherwise (`…920.0`, `9.007199254740992e16`) says the same to every reader.
    const respelled = after.replace(`"certificateNo":${certificate}`, `"certificateNo":9.007199254740992e16`);
    expect(respelled).not.toBe(after);
    expect(await verdicts(respelled)).toEqual(valid);
  }, 60_000);

  it('refuses the history with an event dropped from the middle, the chain and the proofs rebuilt, under the kept checkpoint', async () => {
    const document = JSON.parse(after) as Export;
    document.events.splice(1, 1);
    let prevHash: string | null = null;
    document.events.forEach((event, index) => {
      event.sequence = index + 1;
      event.prevHash = prevHash;
      event.hash = hashProvenanceRecord({
        assetId: document.assetId,
        accountId: document.owner.accountId,
        environment: document.owner.environment as 'live' | 'test',
        sequence: event.sequence,
        type: event.type,
        occurredAt: event.occurredAt,
        data: event.data,
        prevHash,
      });
      prevHash = event.hash;
    });
    const leaves = document.events.map((event) => leafHash(leafInputOf(event.hash)));
    document.treeSize = leaves.length;
    document.rootHash = hex(referenceRoot(leaves));
    document.events.forEach((event, index) => {
      event.leafIndex = index;
      event.leafHash = hex(leaves[index] as Buffer);
      event.auditPath = referenceInclusionProof(index, leaves).map(hex);
    });
    expect(await verdicts(JSON.stringify(document))).toEqual(invalid);
  }, 60_000);

  it('refuses a checkpoint whose signature is replayed from another checkpoint, and one signed by an outsider under the genuine key name', async () => {
    const older = JSON.parse(before) as Export;
    const newer = JSON.parse(after) as Export;
    const olderNote = older.checkpoint?.note as string;
    const newerNote = newer.checkpoint?.note as string;
    // The size-4 text with the size-3 signature: the right key, over other bytes.
    const replayed = structuredClone(newer);
    (replayed.checkpoint as { note: string }).note = `${newerNote.split('\n\n')[0]}\n\n${olderNote.split('\n\n')[1]}`;
    expect(await verdicts(JSON.stringify(replayed))).toEqual(invalid);

    // An outsider's key signing the genuine text under the genuine key's name.
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
    const name = /^\u2014 (\S+) /m.exec(newerNote)?.[1] as string;
    const [origin, size, root, ...rest] = (newerNote.split('\n\n')[0] ?? '').split('\n');
    const signedAtLine = rest.find((line) => line.startsWith('hallmark-signed-at '));
    const outsider = structuredClone(newer);
    (outsider.checkpoint as { note: string }).note = signCheckpoint(
      {
        origin: origin as string,
        treeSize: Number(size),
        rootHash: Buffer.from(root as string, 'base64'),
        ...(signedAtLine ? { signedAt: new Date(signedAtLine.slice('hallmark-signed-at '.length)) } : {}),
      },
      { name, publicKey: raw, sign: (message) => sign(null, message, privateKey) },
    );
    expect(ed25519Thumbprint(raw)).not.toBe(name.slice(name.lastIndexOf('/') + 1));
    expect(await verdicts(JSON.stringify(outsider))).toEqual(invalid);
  }, 60_000);

  it('refuses an inclusion proof claimed for a leaf index at or past the signed size', async () => {
    const document = JSON.parse(after) as Export;
    const last = document.events[3] as Export['events'][number];
    last.leafIndex = document.events.length; // 4, in a tree of 4
    expect(await verdicts(JSON.stringify(document))).toEqual(invalid);
  }, 60_000);
});
