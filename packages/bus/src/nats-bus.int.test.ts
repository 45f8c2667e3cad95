import { randomBytes, randomUUID } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type Msg } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { describeBusContract } from './bus.contract.ts';
import type { Bus } from './bus.ts';
import { createNatsBus, deleteNamespaceStreams, eventStreamName } from './nats-bus.ts';
import { createRequestSigner, type SignatureRefusal } from './request-signature.ts';

const servers = process.env.HALLMARK_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

describeBusContract('NATS', async () => {
  const prefix = `test_${randomUUID().slice(0, 8)}`;
  const extras: Bus[] = [];
  const a = await createNatsBus({ servers, name: 'bus-test-a', prefix });
  const b = await createNatsBus({ servers, name: 'bus-test-b', prefix });
  return {
    a,
    b,
    async extra(options) {
      const bus = await createNatsBus({ servers, name: 'bus-test-extra', prefix, ...options });
      extras.push(bus);
      return bus;
    },
    async teardown() {
      await Promise.all([a.drain(), b.drain()]);
      await deleteNamespaceStreams(servers, prefix);
    },
  };
});

describe('NATS requests when the connection closes', () => {
  it('answers a request in flight SERVICE_UNAVAILABLE (closed) at once, not after its timeout', async () => {
    const prefix = `test_${randomUUID().slice(0, 8)}`;
    const caller = await createNatsBus({ servers, name: 'bus-test-caller', prefix });
    const server = await createNatsBus({ servers, name: 'bus-test-server', prefix });
    try {
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      await server.serve('slow', { queue: 'slow' }, async () => {
        await held;
        return 'late';
      });
      const started = Date.now();
      const inFlight = caller.request('slow', {}, { timeoutMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await caller.drain();
      const reply = await inFlight;
      expect(reply.ok).toBe(false);
      if (!reply.ok) {
        expect(reply.error.code).toBe('SERVICE_UNAVAILABLE');
        expect(reply.error.details).toMatchObject({ reason: 'closed' });
      }
      expect(Date.now() - started).toBeLessThan(5_000);
      release();
    } finally {
      await server.drain();
      await deleteNamespaceStreams(servers, prefix);
    }
  });
});

describe('NATS requests and replies larger than one message (max_payload)', () => {
  it('refuses a request larger than one message as PAYLOAD_TOO_LARGE, and answers a reply beyond its parts as INTERNAL_ERROR without ending the process', async () => {
    const prefix = `test_${randomUUID().slice(0, 8)}`;
    const handlerErrors: unknown[] = [];
    const caller = await createNatsBus({ servers, name: 'bus-test-caller', prefix });
    const server = await createNatsBus({
      servers,
      name: 'bus-test-server',
      prefix,
      onInternalError: (error) => handlerErrors.push(error),
    });
    try {
      let handled = 0;
      await server.serve('sized', { queue: 'sized' }, async (payload) => {
        handled += 1;
        // 65 parts and more of a 1 MB max_payload: beyond what one reply may take.
        return payload === 'huge' ? 'x'.repeat(70 * 1_048_576) : 'fine';
      });
      const tooLarge = await caller.request('sized', 'y'.repeat(1_100_000));
      expect(tooLarge.ok).toBe(false);
      if (!tooLarge.ok) expect(tooLarge.error.code).toBe('PAYLOAD_TOO_LARGE');
      expect(handled).toBe(0);

      const huge = await caller.request('sized', 'huge', { timeoutMs: 20_000 });
      expect(huge.ok).toBe(false);
      if (!huge.ok) expect(huge.error.code).toBe('INTERNAL_ERROR');
      expect(handlerErrors).toHaveLength(1);
      // The server goes on serving.
      expect(await caller.request('sized', 'again')).toEqual({ ok: true, value: 'fine' });
    } finally {
      await caller.drain();
      await server.drain();
      await deleteNamespaceStreams(servers, prefix);
    }
  });
});

describe('NATS event consumers when a fetch fails', () => {
  it('report the failure and go on consuming, with the consumer made again when it was deleted', async () => {
    const prefix = `test_${randomUUID().slice(0, 8)}`;
    const failures: unknown[] = [];
    const bus = await createNatsBus({
      servers,
      name: 'bus-test-consumer',
      prefix,
      onInternalError: (error) => failures.push(error),
    });
    const nc = await connect({ servers });
    try {
      const seen: string[] = [];
      const subscription = await bus.consumeEvents({
        durable: 'survivor',
        subject: 'things.happened',
        handleBatch: async (events) => {
          for (const event of events) seen.push((event.payload as { name: string }).name);
        },
      });
      await bus.publishEvent('things.happened', { name: 'before' });
      await expect.poll(() => seen, { timeout: 5_000 }).toContain('before');
      // The consumer disappears under the fetch in hand (an operator's mistake, a server restart).
      const jsm = await jetstreamManager(nc);
      await jsm.consumers.delete(eventStreamName(prefix), 'survivor');
      await bus.publishEvent('things.happened', { name: 'after' });
      await expect.poll(() => seen, { timeout: 10_000 }).toContain('after');
      expect(failures.length).toBeGreaterThan(0);
      await subscription.stop();
    } finally {
      await nc.close();
      await bus.drain();
      await deleteNamespaceStreams(servers, prefix);
    }
  });
});

describe('NATS event stream', () => {
  it('gives a stream made without limits (by an older version, or by hand) the limits at start', async () => {
    const prefix = `test_${randomUUID().slice(0, 8)}`;
    const nc = await connect({ servers });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: eventStreamName(prefix), subjects: [`${prefix}.events.>`] });
      const bus = await createNatsBus({ servers, name: 'bus-test-limits', prefix });
      await bus.drain();
      const { config } = await jsm.streams.info(eventStreamName(prefix));
      expect({ maxAgeDays: config.max_age / 86_400e9, maxBytes: config.max_bytes }).toEqual({
        maxAgeDays: 7,
        maxBytes: 1024 ** 3,
      });
    } finally {
      await nc.close();
      await deleteNamespaceStreams(servers, prefix);
    }
  });
});

describe('signed NATS requests seen by an insider on the bus', () => {
  it('refuses a captured request sent again with another principal, or after the window, and serves the original', async () => {
    const prefix = `test_${randomUUID().slice(0, 8)}`;
    const secret = randomBytes(32);
    const reasons: SignatureRefusal[] = [];
    const server = await createNatsBus({
      servers,
      name: 'bus-test-signed-server',
      prefix,
      signer: createRequestSigner(secret, { maxAgeMs: 500 }),
      onRefusedRequest: (refusal) => reasons.push(refusal.reason),
    });
    const caller = await createNatsBus({ servers, name: 'bus-test-signed-caller', prefix, signer: createRequestSigner(secret) });
    const insider = await connect({ servers });
    try {
      const handled: unknown[] = [];
      await server.serve('rpc.code-service.generateCode', { queue: 'code-service' }, async (payload) => {
        handled.push(payload);
        return 'done';
      });
      // The insider listens beside the queue group and keeps a copy of what the gateway sends.
      const captured = new Promise<Msg>((resolve) => {
        insider.subscribe(`${prefix}.rpc.code-service.generateCode`, { max: 1, callback: (_error, message) => resolve(message) });
      });
      await insider.flush();
      const principal = { accountId: 'acc_owner', environment: 'live' };
      expect(await caller.request('rpc.code-service.generateCode', { principal })).toEqual({ ok: true, value: 'done' });
      const original = await captured;
      const ask = async (data: Uint8Array) => {
        const reply = await insider.request(original.subject, data, { timeout: 2_000, headers: original.headers });
        return reply.json<{ ok: boolean; error?: { code: string } }>();
      };

      const forged = new TextEncoder().encode(JSON.stringify({ principal: { accountId: 'acc_victim', environment: 'live' } }));
      expect(await ask(forged)).toMatchObject({ ok: false, error: { code: 'SERVICE_UNAVAILABLE' } });
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(await ask(original.data)).toMatchObject({ ok: false, error: { code: 'SERVICE_UNAVAILABLE' } });
      expect(reasons).toEqual(['mismatch', 'expired']);
      expect(handled).toEqual([{ principal }]);
    } finally {
      await insider.close();
      await Promise.all([server.drain(), caller.drain()]);
      await deleteNamespaceStreams(servers, prefix);
    }
  });
});

describe('NATS event stream copies (HALLMARK_NATS_STREAM_REPLICAS)', () => {
  it('makes the stream with one copy by default, and refuses to start, naming the setting, when the server cannot keep more', async () => {
    const prefix = `test_${randomUUID().slice(0, 8)}`;
    const bus = await createNatsBus({ servers, name: 'bus-test-copies', prefix });
    const nc = await connect({ servers });
    try {
      const jsm = await jetstreamManager(nc);
      expect((await jsm.streams.info(eventStreamName(prefix))).config.num_replicas).toBe(1);
      // This machine's NATS is one server: a new stream of three copies cannot be made, and the start
      // says why. (A standalone server accepts raising an existing stream's copies, which it cannot
      // keep either; a cluster keeps them.)
      const fresh = `test_${randomUUID().slice(0, 8)}`;
      await expect(createNatsBus({ servers, name: 'bus-test-fresh', prefix: fresh, streamReplicas: 3 })).rejects.toThrow(
        /JetStream cannot keep 3 copies of the stream .* \(HALLMARK_NATS_STREAM_REPLICAS\)/,
      );
    } finally {
      await nc.close();
      await bus.drain();
      await deleteNamespaceStreams(servers, prefix);
    }
  });
});
