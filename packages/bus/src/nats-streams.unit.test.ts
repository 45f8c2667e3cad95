import { JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { ensureStream, type StreamPlan } from './nats-streams.ts';

// A JetStream server whose stream creation fails as a new server's store did in CI on 2026-12-06
// (err_code 10077, "could not create storage directory"): a race inside nats-server that no test
// here can bring about on demand, so the manager is a stand-in that fails the first `failures` adds.
function managerFailingAdds(failures: number) {
  const calls = { adds: 0 };
  let created = false;
  const storeError = () => new JetStreamApiError({ code: 500, err_code: 10077, description: 'error creating store for stream' });
  const streams = {
    async info(name: string) {
      if (!created) throw new JetStreamApiError({ code: 404, err_code: 10059, description: `stream not found: ${name}` });
      return { config: { name, num_replicas: 1 } };
    },
    async add() {
      calls.adds += 1;
      if (calls.adds <= failures) throw storeError();
      created = true;
      return {};
    },
    async update() {
      return {};
    },
  };
  return { jsm: { streams } as unknown as JetStreamManager, calls };
}

const plan: StreamPlan = { name: 'T_EVENTS', subject: 't.events.>', limits: { max_age: 0, max_bytes: -1 }, replicas: 1 };

describe('ensureStream', () => {
  it('tries a stream creation that failed in the server again, and succeeds with it', async () => {
    const { jsm, calls } = managerFailingAdds(2);
    await ensureStream(jsm, plan);
    expect(calls.adds).toBe(3);
  });

  it('fails with the server’s error when every attempt fails', async () => {
    const { jsm, calls } = managerFailingAdds(10);
    await expect(ensureStream(jsm, plan)).rejects.toThrow('error creating store for stream');
    expect(calls.adds).toBe(3);
  });
});
