import { randomBytes, randomUUID } from 'node:crypto';
import { HallmarkError } from '@hallmark/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus, BusEvent } from './bus.ts';
import { createRequestSigner, type RefusedRequestListener, type RequestSigner } from './request-signature.ts';

export interface BusFixture {
  /** Two connections to the same bus, as two processes would have. */
  a: Bus;
  b: Bus;
  /** A bus that must be drained by the test itself; with a signer, it signs its requests and serves only signed ones. */
  extra(options?: { signer?: RequestSigner; onRefusedRequest?: RefusedRequestListener }): Promise<Bus>;
  teardown(): Promise<void>;
}

async function eventually(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** What every bus adapter must do. */
export function describeBusContract(name: string, createFixture: () => Promise<BusFixture>): void {
  describe(`bus contract: ${name}`, () => {
    let fixture: BusFixture;
    beforeAll(async () => {
      fixture = await createFixture();
    });
    afterAll(async () => {
      await fixture?.teardown();
    });
    const subject = (label: string) => `rpc.test.${label}.${randomUUID().slice(0, 8)}`;

    it('answers a request with the handler value and carries the request id', async () => {
      const s = subject('echo');
      const served = await fixture.b.serve(s, { queue: 'test' }, async (payload, context) => ({ payload, context }));
      const reply = await fixture.a.request<{ payload: unknown; context: { requestId: string; subject: string } }>(
        s,
        { hello: 'world', n: 1 },
        { requestId: 'req-123' },
      );
      await served.stop();
      expect(reply).toEqual({
        ok: true,
        value: { payload: { hello: 'world', n: 1 }, context: { requestId: 'req-123', subject: s } },
      });
    });

    it('answers with a reply of several megabytes whole (over NATS, in parts), and the next request as usual', async () => {
      const s = subject('large');
      // Multi-byte characters, so bytes and characters differ: 2.5 MB of '€' and an ASCII tail.
      const large = { text: `${'€'.repeat(800_000)}${randomBytes(8).toString('hex')}` };
      const served = await fixture.b.serve(s, { queue: 'test' }, async (payload) => (payload === 'large' ? large : 'small'));
      const reply = await fixture.a.request<{ text: string }>(s, 'large', { timeoutMs: 10_000 });
      expect(reply).toEqual({ ok: true, value: large });
      expect(await fixture.a.request(s, 'next')).toEqual({ ok: true, value: 'small' });
      await served.stop();
    });

    it('carries a handler error as a typed value with its code and details', async () => {
      const s = subject('fail');
      const served = await fixture.b.serve(s, { queue: 'test' }, async () => {
        throw new HallmarkError('CONFLICT', 'Already sold', { state: 'sold' });
      });
      const reply = await fixture.a.request(s, {});
      await served.stop();
      expect(reply).toEqual({ ok: false, error: { code: 'CONFLICT', message: 'Already sold', details: { state: 'sold' } } });
    });

    it('hides an unexpected error behind INTERNAL_ERROR', async () => {
      const s = subject('crash');
      const served = await fixture.b.serve(s, { queue: 'test' }, async () => {
        throw new Error('connection string postgres://secret@db');
      });
      const reply = await fixture.a.request(s, {});
      await served.stop();
      expect(reply.ok).toBe(false);
      if (!reply.ok) {
        expect(reply.error.code).toBe('INTERNAL_ERROR');
        expect(JSON.stringify(reply.error)).not.toContain('secret');
      }
    });

    it('answers SERVICE_UNAVAILABLE at once when nobody serves the subject', async () => {
      const started = Date.now();
      const reply = await fixture.a.request(subject('nobody'), {}, { timeoutMs: 3_000 });
      expect(reply.ok).toBe(false);
      if (!reply.ok) {
        expect(reply.error.code).toBe('SERVICE_UNAVAILABLE');
        expect(reply.error.details).toMatchObject({ reason: 'no-responders' });
      }
      expect(Date.now() - started).toBeLessThan(1_000);
    });

    it('answers SERVICE_UNAVAILABLE when the handler is slower than the timeout', async () => {
      const s = subject('slow');
      const served = await fixture.b.serve(s, { queue: 'test' }, () => new Promise((resolve) => setTimeout(resolve, 600)));
      const reply = await fixture.a.request(s, {}, { timeoutMs: 150 });
      expect(reply.ok).toBe(false);
      if (!reply.ok) expect(reply.error.details).toMatchObject({ reason: 'timeout' });
      await served.stop();
    });

    it('gives each request to exactly one member of a queue group, and spreads them', async () => {
      const s = subject('queue');
      const counts = { a: 0, b: 0 };
      const one = await fixture.a.serve(s, { queue: 'svc' }, async () => ++counts.a && 'a');
      const two = await fixture.b.serve(s, { queue: 'svc' }, async () => ++counts.b && 'b');
      const replies = await Promise.all(Array.from({ length: 60 }, () => fixture.a.request<string>(s, {})));
      await one.stop();
      await two.stop();
      expect(replies.every((reply) => reply.ok)).toBe(true);
      expect(counts.a + counts.b).toBe(60);
      expect(counts.a).toBeGreaterThan(0);
      expect(counts.b).toBeGreaterThan(0);
    });

    it('broadcasts to every subscriber', async () => {
      const s = `broadcast.${randomUUID().slice(0, 8)}`;
      const got: string[] = [];
      const first = await fixture.a.onBroadcast(`${s}.*`, (payload) => got.push(`a:${(payload as { k: string }).k}`));
      const second = await fixture.b.onBroadcast(`${s}.*`, (payload) => got.push(`b:${(payload as { k: string }).k}`));
      await new Promise((resolve) => setTimeout(resolve, 50));
      await fixture.a.broadcast(`${s}.revoked`, { k: 'key1' });
      await eventually(() => got.length === 2);
      await first.stop();
      await second.stop();
      expect(got.sort()).toEqual(['a:key1', 'b:key1']);
    });

    it('keeps events for a durable consumer, in order, and resumes after the last acknowledged', async () => {
      const topic = `scan.${randomUUID().slice(0, 8)}`;
      const durable = `durable-${randomUUID().slice(0, 8)}`;
      const got: BusEvent[] = [];
      for (const n of [1, 2, 3]) await fixture.a.publishEvent(topic, { n }, { requestId: `r${n}` });
      const first = await fixture.b.consumeEvents({ durable, subject: topic, handle: async (event) => void got.push(event) });
      await eventually(() => got.length === 3);
      await first.stop();
      await fixture.a.publishEvent(topic, { n: 4 });
      await fixture.a.publishEvent(`other.${topic}`, { n: 99 });
      const second = await fixture.b.consumeEvents({ durable, subject: topic, handle: async (event) => void got.push(event) });
      await eventually(() => got.length === 4);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await second.stop();
      expect(got.map((event) => (event.payload as { n: number }).n)).toEqual([1, 2, 3, 4]);
      expect(got[0]?.requestId).toBe('r1');
      expect(got[0]?.subject).toBe(topic);
      expect(got[3]!.sequence).toBeGreaterThan(got[2]!.sequence);
    });

    it('delivers events in batches, each in order, and a failed batch again', async () => {
      const topic = `batch.${randomUUID().slice(0, 8)}`;
      for (let n = 1; n <= 25; n++) await fixture.a.publishEvent(topic, { n });
      const batches: number[][] = [];
      let failedOnce = false;
      const consumer = await fixture.b.consumeEvents({
        durable: `batch-${randomUUID().slice(0, 8)}`,
        subject: topic,
        maxBatch: 10,
        async handleBatch(events) {
          if (!failedOnce) {
            failedOnce = true;
            throw new Error('transient');
          }
          batches.push(events.map((event) => (event.payload as { n: number }).n));
        },
      });
      await eventually(() => new Set(batches.flat()).size >= 25, 8_000);
      await consumer.stop();
      expect([...new Set(batches.flat())].sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
      for (const batch of batches) expect(batch).toEqual([...batch].sort((a, b) => a - b));
      expect(Math.max(...batches.map((batch) => batch.length))).toBeLessThanOrEqual(10);
      expect(batches.length).toBeLessThan(25);
    });

    it('delivers an event again when its handler fails', async () => {
      const topic = `retry.${randomUUID().slice(0, 8)}`;
      let attempts = 0;
      const deliveries: boolean[] = [];
      await fixture.a.publishEvent(topic, { n: 1 });
      const consumer = await fixture.b.consumeEvents({
        durable: `retry-${randomUUID().slice(0, 8)}`,
        subject: topic,
        async handle(event) {
          deliveries.push(event.redelivered);
          if (++attempts === 1) throw new Error('transient');
        },
      });
      await eventually(() => attempts >= 2);
      await consumer.stop();
      expect(deliveries.slice(0, 2)).toEqual([false, true]);
    });

    it('with a signer: serves requests signed with the same secret and refuses unsigned or foreign ones unseen', async () => {
      const secret = randomBytes(32);
      const refusals: Array<{ kind: string; subject: string; requestId: string; reason: string }> = [];
      const server = await fixture.extra({ signer: createRequestSigner(secret), onRefusedRequest: (r) => refusals.push(r) });
      const signedCaller = await fixture.extra({ signer: createRequestSigner(secret) });
      const foreignCaller = await fixture.extra({ signer: createRequestSigner(randomBytes(32)) });
      try {
        const s = subject('signed');
        let handled = 0;
        await server.serve(s, { queue: 'svc' }, async (payload) => {
          handled++;
          return payload;
        });
        const principal = { accountId: 'acc_a', environment: 'live' };
        expect(await signedCaller.request(s, { principal }, { requestId: 'req-signed' })).toEqual({
          ok: true,
          value: { principal },
        });
        const refused = {
          ok: false,
          error: expect.objectContaining({ code: 'SERVICE_UNAVAILABLE', details: { subject: s, reason: 'refused' } }),
        };
        expect(await fixture.a.request(s, { principal }, { requestId: 'req-unsigned' })).toEqual(refused);
        expect(await foreignCaller.request(s, { principal }, { requestId: 'req-foreign' })).toEqual(refused);
        expect(handled).toBe(1);
        expect(refusals).toEqual([
          { kind: 'request', subject: s, requestId: 'req-unsigned', reason: 'missing' },
          { kind: 'request', subject: s, requestId: 'req-foreign', reason: 'mismatch' },
        ]);
      } finally {
        await Promise.all([server.drain(), signedCaller.drain(), foreignCaller.drain()]);
      }
    });

    it('a served subject stops once its handlers in flight have answered, and takes no more', async () => {
      const server = await fixture.extra();
      try {
        const s = subject('stop-waits');
        let answered = false;
        const served = await server.serve(s, { queue: 'svc' }, async () => {
          await new Promise((resolve) => setTimeout(resolve, 300));
          answered = true;
          return 'done';
        });
        const inFlight = fixture.a.request<string>(s, {}, { timeoutMs: 2_000 });
        await new Promise((resolve) => setTimeout(resolve, 50));
        await served.stop();
        // What the service closes next (a thread pool, say) is no longer in use by the request.
        expect(answered).toBe(true);
        expect(await inFlight).toEqual({ ok: true, value: 'done' });
        const after = await fixture.a.request(s, {}, { timeoutMs: 500 });
        expect(after.ok).toBe(false);
      } finally {
        await server.drain();
      }
    });

    it('drains: finishes the request in flight, then takes no more', async () => {
      const server = await fixture.extra();
      const s = subject('drain');
      await server.serve(s, { queue: 'svc' }, () => new Promise((resolve) => setTimeout(() => resolve('done'), 300)));
      const inFlight = fixture.a.request<string>(s, {}, { timeoutMs: 2_000 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await server.drain();
      expect(await inFlight).toEqual({ ok: true, value: 'done' });
      const after = await fixture.a.request(s, {}, { timeoutMs: 500 });
      expect(after.ok).toBe(false);
    });
  });
}
