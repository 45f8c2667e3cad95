import { randomUUID } from 'node:crypto';
import { describeBusContract } from './bus.contract.ts';
import type { Bus } from './bus.ts';
import { createNatsBus, deleteEventStream } from './nats-bus.ts';

const servers = process.env.HALLMARK_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

describeBusContract('NATS', async () => {
  const prefix = `test_${randomUUID().slice(0, 8)}`;
  const extras: Bus[] = [];
  const a = await createNatsBus({ servers, name: 'bus-test-a', prefix });
  const b = await createNatsBus({ servers, name: 'bus-test-b', prefix });
  return {
    a,
    b,
    async extra() {
      const bus = await createNatsBus({ servers, name: 'bus-test-extra', prefix });
      extras.push(bus);
      return bus;
    },
    async teardown() {
      await Promise.all([a.drain(), b.drain()]);
      await deleteEventStream(servers, prefix);
    },
  };
});
