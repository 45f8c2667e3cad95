// A tenant that holds the gateway's upload slots without sending (docs/SECURITY.md, "Bounded work per
// request"): photo uploads and brand logos share HALLMARK_UPLOADS_AT_ONCE slots (4), each taken before
// the photo's body is read. Two attacks, written by hand on raw connections to 127.0.0.1:
// - uploads that send their headers and two bytes of body, then disconnect: those that waited for a
//   slot must leave the queue instead of later reading a closed request for ever (a slot lost each),
//   and a logo whose client left while it waited is neither decoded nor stored;
// - uploads that trickle a byte at a time: one account holds at most half the slots, and an upload
//   must arrive within HALLMARK_HTTP_REQUEST_TIMEOUT_MS (here 2 s, while Node's own check of it
//   waits for the 15 s headers timeout), else 408 and its slot is freed.
// Meanwhile and afterwards, other accounts' uploads go through. In both forms.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call, startEmbeddedProduct } from '../support/embedded.ts';
import { picture } from '../support/pictures.ts';

const requestTimeoutMs = 2_000;
const settings = { HALLMARK_HTTP_REQUEST_TIMEOUT_MS: String(requestTimeoutMs) };
const boundary = 'heldboundary';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A multipart photo upload's body: the angle, then the file. */
function photoForm(angle: string, file: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="angle"\r\n\r\n${angle}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="photo"; filename="p.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
    ),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * An upload written by hand on a connection of its own: the request head (the whole body's
 * Content-Length) and the body's first `sentBytes`; the rest is sent by `sendRest`, `trickle` or
 * never. `answer` is the first response, complete; `closed`, the connection's end.
 */
interface RawUpload {
  socket: Socket;
  answer: Promise<Answer>;
  closed: Promise<void>;
  answeredAt(): number | undefined;
  sendRest(): void;
  /** Sends the rest of the body one byte every `everyMs`, until the connection closes. */
  trickle(everyMs: number): void;
}

/** A photo upload (multipart) unless `head` says otherwise. */
async function openUpload(
  origin: string,
  head: { path: string; key: string; method?: string; contentType?: string },
  body: Buffer,
  sentBytes: number,
): Promise<RawUpload> {
  const { port } = new URL(origin);
  const socket = await new Promise<Socket>((resolve, reject) => {
    const opened = connect(Number(port), '127.0.0.1', () => resolve(opened));
    opened.once('error', reject);
  });
  // The gateway may close the connection while bytes are still being written (a 408): not an error here.
  socket.on('error', () => {});
  let received = Buffer.alloc(0);
  let answeredAt: number | undefined;
  const answer = new Promise<Answer>((resolve, reject) => {
    const parse = () => {
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine = '', ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      const length = Number(headers['content-length'] ?? 0);
      if (received.length < end + 4 + length) return;
      answeredAt ??= Date.now();
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1]),
        headers,
        body: received.subarray(end + 4, end + 4 + length).toString('utf8'),
      });
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      parse();
    });
    socket.once('close', () => reject(new Error(`closed without an answer: ${received.toString('latin1')}`)));
  });
  answer.catch(() => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(
    `${head.method ?? 'POST'} ${head.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${head.key}\r\n` +
      `Content-Type: ${head.contentType ?? `multipart/form-data; boundary=${boundary}`}\r\nContent-Length: ${body.length}\r\n\r\n`,
  );
  socket.write(body.subarray(0, sentBytes));
  let sent = sentBytes;
  return {
    socket,
    answer,
    closed,
    answeredAt: () => answeredAt,
    sendRest() {
      socket.write(body.subarray(sent));
      sent = body.length;
    },
    trickle(everyMs) {
      const timer = setInterval(() => {
        if (socket.destroyed || sent >= body.length - 1) {
          clearInterval(timer);
          return;
        }
        socket.write(body.subarray(sent, sent + 1));
        sent += 1;
      }, everyMs);
      socket.once('close', () => clearInterval(timer));
    },
  };
}

const envelopeOf = (answer: Answer) => JSON.parse(answer.body) as { error: { code: string; message: string } };

describe.each([
  ['embedded', () => startEmbeddedProduct(settings)],
  ['distributed', () => startDistributedProduct(settings)],
])('upload slots held by a tenant that does not send (%s form)', (_form, start) => {
  let product: RunningProduct;
  let seed = 0;
  const opened: RawUpload[] = [];

  const newAccount = async (name: string, tier: 'free' | 'enterprise') => {
    const created = await call<{ apiKey: { secret: string } }>(product.url, 'POST', '/api/v1/accounts', {
      key: product.operatorKey,
      body: { name, tier },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.apiKey.secret;
  };
  const photosPathOf = async (key: string) => {
    const registered = await call<{ object: { id: string } }>(product.url, 'POST', '/api/v1/auction/objects/register', {
      key,
      body: { title: `Clock ${++seed}`, category: 'watch' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    return `/api/v1/auction/objects/${registered.body.object.id}/photos`;
  };
  /** A complete photo upload by fetch, to a new object of the account's; its status, or 0 if no answer came within 5 s. */
  const uploadPhoto = async (key: string) => {
    const path = await photosPathOf(key);
    const form = new FormData();
    form.append('angle', 'dial');
    form.append('photo', new Blob([await picture(++seed)], { type: 'image/jpeg' }), 'p.jpg');
    try {
      const response = await fetch(`${product.url}${path}`, {
        method: 'POST',
        headers: { 'x-api-key': key },
        body: form,
        signal: AbortSignal.timeout(5_000),
      });
      await response.arrayBuffer();
      return response.status;
    } catch {
      return 0;
    }
  };
  const open = async (key: string, path: string, body: Buffer, sentBytes: number) => {
    const upload = await openUpload(product.url, { path, key }, body, sentBytes);
    opened.push(upload);
    return upload;
  };

  beforeAll(async () => {
    product = await start();
  });

  afterAll(async () => {
    for (const upload of opened) upload.socket.destroy();
    await product?.stop();
  });

  /** The 503s one account's extra uploads got at once: half the slots and half the waiting places are its share. */
  const expectRefusedForTheirShare = async (refused: RawUpload[]) => {
    expect(refused).toHaveLength(4);
    for (const upload of refused) {
      const answer = await upload.answer;
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('1');
      expect(envelopeOf(answer).error.code).toBe('SERVICE_UNAVAILABLE');
      expect(envelopeOf(answer).error.message).toContain('This account already has as many uploads in progress');
    }
  };

  it('drops the uploads of a client that disconnected while they waited for a slot: every slot comes back', async () => {
    const attacker = await newAccount('Disconnecting tenant', 'free');
    const target = await photosPathOf(attacker);
    const body = photoForm('dial', await picture(++seed));
    // Eight uploads: headers and 2 bytes of body each, then the client disconnects all of them.
    const uploads = await Promise.all(Array.from({ length: 8 }, () => open(attacker, target, body, 2)));
    await sleep(800);
    const refused = uploads.filter((upload) => upload.answeredAt() !== undefined);
    for (const upload of uploads) upload.socket.destroy();
    await Promise.all(uploads.map((upload) => upload.closed));
    await sleep(200);

    // Every slot is free again: three held uploads by two accounts take three, and a fourth account's
    // upload runs in the last one at once (a lost slot would leave it waiting behind the held ones).
    const keeper = await newAccount('Keeper', 'enterprise');
    const other = await newAccount('Other keeper', 'enterprise');
    const held = await Promise.all([
      open(keeper, await photosPathOf(keeper), photoForm('dial', await picture(++seed)), 40),
      open(keeper, await photosPathOf(keeper), photoForm('dial', await picture(++seed)), 40),
      open(other, await photosPathOf(other), photoForm('dial', await picture(++seed)), 40),
    ]);
    await sleep(200);
    expect(held.map((upload) => upload.answeredAt())).toEqual([undefined, undefined, undefined]);
    const startedAt = Date.now();
    expect(await uploadPhoto(await newAccount('Bystander', 'enterprise'))).toBe(201);
    expect(Date.now() - startedAt).toBeLessThan(4_000);
    for (const upload of held) upload.sendRest();
    expect((await Promise.all(held.map((upload) => upload.answer))).map((answer) => answer.status)).toEqual([201, 201, 201]);
    // And the disconnecting account itself may upload again.
    expect(await uploadPhoto(attacker)).toBe(201);
    // It had held 2 slots and 2 waiting places; its other 4 uploads were refused at once.
    await expectRefusedForTheirShare(refused);
  });

  it('does not decode or store a logo whose client left while it waited for a slot', async () => {
    // Two accounts hold all four slots with photo uploads that wait for the rest of their body.
    const first = await newAccount('First holder', 'enterprise');
    const second = await newAccount('Second holder', 'enterprise');
    const held = await Promise.all(
      [first, first, second, second].map(async (key) =>
        open(key, await photosPathOf(key), photoForm('dial', await picture(++seed)), 40),
      ),
    );
    const brand = await newAccount('Brand that leaves', 'enterprise');
    const png = await picture(++seed, { side: 64, format: 'png' });
    const logo = await openUpload(
      product.url,
      { method: 'PUT', path: '/api/v1/account/branding/logo', key: brand, contentType: 'image/png' },
      png,
      png.length,
    );
    opened.push(logo);
    await sleep(300);
    expect(logo.answeredAt()).toBeUndefined();
    logo.socket.destroy();
    await logo.closed;
    await sleep(200);
    for (const upload of held) upload.sendRest();
    expect((await Promise.all(held.map((upload) => upload.answer))).map((answer) => answer.status)).toEqual([201, 201, 201, 201]);
    await sleep(300);
    const branding = await call<{ logo: unknown }>(product.url, 'GET', '/api/v1/account/branding', { key: brand });
    expect(branding.status).toBe(200);
    expect(branding.body.logo).toBeNull();
    // Sent again by a client that stays, it is stored.
    const stored = await fetch(`${product.url}/api/v1/account/branding/logo`, {
      method: 'PUT',
      headers: { 'x-api-key': brand, 'content-type': 'image/png' },
      body: png,
      signal: AbortSignal.timeout(5_000),
    });
    expect(stored.status).toBe(200);
    expect(((await stored.json()) as { logo: unknown }).logo).not.toBeNull();
  });

  it('keeps a trickling tenant to half the slots, serves others meanwhile, and ends its uploads with 408 at the request timeout', async () => {
    const attacker = await newAccount('Trickling tenant', 'free');
    const target = await photosPathOf(attacker);
    const body = photoForm('dial', await picture(++seed));
    const openedAt = Date.now();
    const uploads = await Promise.all(Array.from({ length: 8 }, () => open(attacker, target, body, 120)));
    for (const upload of uploads) upload.trickle(250);
    await sleep(600);

    // While the tenant trickles, another account's photo and logo go through.
    const bystander = await newAccount('Bystander while trickling', 'enterprise');
    expect(await uploadPhoto(bystander)).toBe(201);
    const logo = await fetch(`${product.url}/api/v1/account/branding/logo`, {
      method: 'PUT',
      headers: { 'x-api-key': bystander, 'content-type': 'image/png' },
      body: await picture(++seed, { side: 64, format: 'png' }),
      signal: AbortSignal.timeout(5_000),
    });
    expect(logo.status, await logo.text()).toBe(200);
    // The tenant holds half the slots and half the waiting places; its other four were refused at once.
    const refused = uploads.filter((upload) => (upload.answeredAt() ?? Number.POSITIVE_INFINITY) < openedAt + 1_000);
    await expectRefusedForTheirShare(refused);
    const held = uploads.filter((upload) => !refused.includes(upload));

    // At the request timeout the held ones (two running, two waiting) are answered 408 and closed,
    // long before Node's own check (15 s here): the route keeps the time itself.
    const answers = await Promise.all(held.map((upload) => upload.answer));
    for (const answer of answers) {
      expect(answer.status).toBe(408);
      expect(answer.headers.connection).toBe('close');
      expect(envelopeOf(answer).error.code).toBe('REQUEST_TIMEOUT');
    }
    await Promise.all(held.map((upload) => upload.closed));
    for (const upload of held) {
      expect(upload.answeredAt() as number).toBeGreaterThanOrEqual(openedAt + requestTimeoutMs - 100);
      expect(upload.answeredAt() as number).toBeLessThan(openedAt + requestTimeoutMs + 1_500);
    }
    // Their slots are free: the tenant and others upload again.
    for (const upload of refused) upload.socket.destroy();
    expect(await uploadPhoto(attacker)).toBe(201);
    expect(await uploadPhoto(bystander)).toBe(201);
  });
});
