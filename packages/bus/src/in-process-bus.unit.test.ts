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
});
