import { describe, expect, it } from 'vitest';
import { describeBusContract } from './bus.contract.ts';
import { createInProcessHub } from './in-process-bus.ts';

describeBusContract('in-process', async () => {
  const hub = createInProcessHub();
  const a = hub.connect();
  const b = hub.connect();
  return {
    a,
    b,
    extra: async (options) => hub.connect(options),
    teardown: async () => {
      await Promise.all([a.drain(), b.drain()]);
    },
  };
});

describe('in-process bus retention', () => {
  it('keeps at most maxEvents events, dropping the oldest', async () => {
    const hub = createInProcessHub({ maxEvents: 3 });
    const bus = hub.connect();
    for (let n = 1; n <= 5; n++) await bus.publishEvent('retention.test', { n });
    const seen: number[] = [];
    const consumer = await bus.consumeEvents({
      durable: 'retention',
      subject: 'retention.test',
      handle: async (event) => void seen.push((event.payload as { n: number }).n),
    });
    const deadline = Date.now() + 2_000;
    while (seen.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    await consumer.stop();
    expect(seen).toEqual([3, 4, 5]);
  });

  const until = async (done: () => boolean) => {
    const deadline = Date.now() + 5_000;
    while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  };

  it('drops an event once every durable consumer acknowledged it, and keeps it for one that is stopped', async () => {
    const hub = createInProcessHub();
    const bus = hub.connect();
    // No durable consumer yet: everything is kept for the first one.
    for (let n = 1; n <= 10; n++) await bus.publishEvent('retention.test', { n });
    expect(hub.keptEvents()).toBe(10);
    const seen = { a: [] as number[], b: [] as number[] };
    const consume = (name: 'a' | 'b') =>
      bus.consumeEvents({
        durable: `retention-${name}`,
        subject: 'retention.test',
        handleBatch: async (events) => void seen[name].push(...events.map((event) => (event.payload as { n: number }).n)),
      });
    const a = await consume('a');
    let b = await consume('b');
    for (let n = 11; n <= 1_000; n++) await bus.publishEvent('retention.test', { n });
    await until(() => seen.a.length === 1_000 && seen.b.length === 1_000);
    expect(seen.a).toEqual(Array.from({ length: 1_000 }, (_, i) => i + 1));
    expect(seen.b).toEqual(seen.a);
    await until(() => hub.keptEvents() === 0);
    expect(hub.keptEvents()).toBe(0);

    // A stopped durable consumer still holds what it has not acknowledged, and gets it when it resumes.
    await b.stop();
    for (let n = 1_001; n <= 1_010; n++) await bus.publishEvent('retention.test', { n });
    await until(() => seen.a.length === 1_010);
    expect(hub.keptEvents()).toBe(10);
    b = await consume('b');
    await until(() => seen.b.length === 1_010);
    expect(seen.b.slice(1_000)).toEqual(Array.from({ length: 10 }, (_, i) => 1_001 + i));
    await until(() => hub.keptEvents() === 0);
    expect(hub.keptEvents()).toBe(0);
    await Promise.all([a.stop(), b.stop()]);
  });
});

describe('in-process bus: an event its publisher must know is kept (messageId)', () => {
  it('resolves once every running durable consumer of its subject has handled it, at once when none runs', async () => {
    const bus = createInProcessHub().connect();
    // No consumer of the subject: nothing to wait for.
    await bus.publishEvent('kept.test', { n: 0 }, { messageId: 'm0' });
    const handled: number[] = [];
    const slowly = await bus.consumeEvents({
      durable: 'slow-writer',
      subject: 'kept.test',
      // A partial batch would linger 250 ms for more; a waiting publisher's does not.
      handleBatch: async (events) => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        for (const event of events) handled.push((event.payload as { n: number }).n);
      },
    });
    const started = Date.now();
    await bus.publishEvent('kept.test', { n: 1 }, { messageId: 'm1' });
    expect(handled).toContain(1);
    expect(Date.now() - started).toBeLessThan(240);
    await slowly.stop();
    await bus.drain();
  });

  it('rejects after timeoutMs while its consumer fails, and the event is handled once it stops failing', async () => {
    const bus = createInProcessHub().connect();
    let failing = true;
    const handled: number[] = [];
    const consumer = await bus.consumeEvents({
      durable: 'failing-writer',
      subject: 'kept.test',
      handle: async (event) => {
        if (failing) throw new Error('the database is away');
        handled.push((event.payload as { n: number }).n);
      },
    });
    await expect(bus.publishEvent('kept.test', { n: 1 }, { messageId: 'm1', timeoutMs: 200 })).rejects.toThrow(/not handled/);
    failing = false;
    const deadline = Date.now() + 3_000;
    while (handled.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(handled).toEqual([1]);
    await consumer.stop();
    await bus.drain();
  });
});
