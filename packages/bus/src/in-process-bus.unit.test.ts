import { describeBusContract } from './bus.contract.ts';
import { createInProcessHub } from './in-process-bus.ts';

describeBusContract('in-process', async () => {
  const hub = createInProcessHub();
  const a = hub.connect();
  const b = hub.connect();
  return {
    a,
    b,
    extra: async () => hub.connect(),
    teardown: async () => {
      await Promise.all([a.drain(), b.drain()]);
    },
  };
});
