// Stopping the embedded product (`hallmark start`, SIGTERM: Ctrl-C, a service manager) with
// verifications in flight on kept-alive connections, as a scanning client keeps them: each is
// answered with its verdict and `Connection: close`, the idle connections (and those that never
// sent a request) are closed, the process exits 0 within its stop timeout instead of waiting out the
// clients' keep-alive, and each scan answered COUNTERFEIT is there after a restart; a request
// pipelined behind one of them, read once the stop has begun, is not run. Over raw HTTP/1.1 against
// the real process, the requests' bodies held back until the stop has begun, so that they are in
// flight, not racing it.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call } from '../support/embedded.ts';
import { type HallmarkServer, startHallmarkServer } from '../support/hallmark-server.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A server of this test's, killed after it (SIGKILL) if it still runs. */
async function startServer(dataDir: string): Promise<HallmarkServer> {
  const server = await startHallmarkServer(dataDir);
  cleanups.push(server.dispose);
  return server;
}

/** A kept-alive HTTP/1.1 connection read by hand: each answer whole (Content-Length), and whether the server closed it. */
class Connection {
  private buffered = Buffer.alloc(0);
  private wake: (() => void) | undefined;
  closed = false;
  readonly closedAt: Promise<void>;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.wake?.();
    });
    this.closedAt = new Promise((resolve) =>
      socket.on('close', () => {
        this.closed = true;
        this.wake?.();
        resolve();
      }),
    );
    socket.on('error', () => {});
  }

  static async open(port: number): Promise<Connection> {
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new Connection(socket);
  }

  send(text: string): void {
    this.socket.write(text);
  }

  /** The next answer: its status, headers (lower-case names) and body; throws if the connection closes first. */
  async answer(): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    for (;;) {
      const end = this.buffered.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [statusLine = '', ...lines] = this.buffered.subarray(0, end).toString('latin1').split('\r\n');
        const headers = Object.fromEntries(
          lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
        );
        const length = Number(headers['content-length'] ?? 0);
        if (this.buffered.length >= end + 4 + length) {
          const body = this.buffered.subarray(end + 4, end + 4 + length).toString('utf8');
          this.buffered = this.buffered.subarray(end + 4 + length);
          return { status: Number(statusLine.split(' ')[1]), headers, body };
        }
      }
      if (this.closed) throw new Error(`the connection closed before an answer (${this.buffered.length} bytes read)`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }
}

function ok(response: { status: number; body: Json }, status = 200): Json {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  return response.body;
}

const forge = (url: string, serial: string) =>
  url.replace('/21/S-1', `/21/${serial}`).replace(/sig=(.)/, (_: string, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);

describe('stopping the embedded product with verifications in flight', () => {
  it('answers each with its verdict and Connection: close, exits 0 at once, and keeps each COUNTERFEIT scan', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'hallmark-shutdown-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const first = await startServer(dataDir);
    const operator = (await readFile(join(dataDir, 'operator-key'), 'utf8')).trim();
    const api = (url: string, key: string) => (method: string, path: string, body?: unknown) =>
      call<Json>(url, method, `/api/v1${path}`, { key, body });
    const created = ok(await api(first.url, operator)('POST', '/accounts', { name: 'Brand', tier: 'enterprise' }), 201);
    const key = created.apiKey.secret as string;
    const gtin = '09506000134352';
    ok(await api(first.url, operator)('POST', `/accounts/${created.account.id}/gtins`, { gtin }), 201);
    const code = ok(await api(first.url, key)('POST', '/code/generate', { gtin, serialNumber: 'S-1', batchNumber: 'L1' }), 201);

    // Six kept-alive connections, each having had an answer; four will carry a verification, two stay idle.
    const connections = await Promise.all(Array.from({ length: 6 }, () => Connection.open(first.port)));
    for (const connection of connections) {
      connection.send('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
      const health = await connection.answer();
      expect(health.status).toBe(200);
      expect(health.headers.connection).toBe('keep-alive');
    }
    const carrying = connections.slice(0, 4);
    const idle = connections.slice(4);
    // Two more that never send a request (a client's spare connections, or a request abandoned
    // before it was written): Node's closeIdleConnections passes them by, and the stop waited on
    // them until its 10 s timeout (exit 1), or 69 s in a test's in-process product.
    const silent = await Promise.all(Array.from({ length: 2 }, () => Connection.open(first.port)));
    const serials = ['S-1', 'FAKE-1', 'FAKE-2', 'FAKE-3'];
    const bodies = serials.map((serial) =>
      Buffer.from(JSON.stringify({ url: serial === 'S-1' ? code.url : forge(code.url, serial) })),
    );
    // Each verification's headers and the first half of its body, the rest held back.
    carrying.forEach((connection, i) => {
      const body = bodies[i] as Buffer;
      connection.send(
        'POST /api/v1/code/verify HTTP/1.1\r\nHost: localhost\r\ncontent-type: application/json\r\n' +
          `x-api-key: ${key}\r\ncontent-length: ${body.length}\r\n\r\n${body.subarray(0, body.length / 2).toString()}`,
      );
    });
    await new Promise((resolve) => setTimeout(resolve, 200));

    const signalledAt = Date.now();
    first.child.kill('SIGTERM');
    // The stop has begun once the server closes the idle connections.
    await Promise.all([...idle, ...silent].map((connection) => connection.closedAt));
    for (const [i, connection] of carrying.entries()) {
      const body = bodies[i] as Buffer;
      connection.send(body.subarray(body.length / 2).toString());
    }
    // Pipelined behind the first verification, read after the stop began: refused, not run.
    const late = JSON.stringify({ gtin, serialNumber: 'AFTER-STOP', batchNumber: 'L1' });
    carrying[0]?.send(
      'POST /api/v1/code/generate HTTP/1.1\r\nHost: localhost\r\ncontent-type: application/json\r\n' +
        `x-api-key: ${key}\r\ncontent-length: ${late.length}\r\n\r\n${late}`,
    );
    const answers = await Promise.all(carrying.map((connection) => connection.answer()));
    for (const [i, answer] of answers.entries()) {
      expect(answer.status, answer.body).toBe(200);
      expect(JSON.parse(answer.body).verdict).toBe(serials[i] === 'S-1' ? 'AUTHENTIC' : 'COUNTERFEIT');
      // Not kept alive: the client opens its next connection elsewhere.
      expect(answer.headers.connection).toBe('close');
    }
    await Promise.all(carrying.map((connection) => connection.closedAt));
    // Exited by itself, well within its 10 s stop timeout (it exits 1 after that): on the code
    // before, the four connections stayed open after their answers for the keep-alive's 72 s.
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(8_000);

    // A COUNTERFEIT is answered only once its scan is stored: each is there after a restart.
    const second = await startServer(dataDir);
    const stored = ok(await api(second.url, key)('GET', '/scans?limit=200'));
    const storedScans = stored.scans.map((scan: Json) => `${scan.serial} ${scan.verdict}`);
    for (const serial of serials.slice(1)) expect(storedScans).toContain(`${serial} COUNTERFEIT`);
    // The pipelined request made nothing: its serial is still free.
    ok(await api(second.url, key)('POST', '/code/generate', { gtin, serialNumber: 'AFTER-STOP', batchNumber: 'L1' }), 201);
    second.child.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });
  });
});
