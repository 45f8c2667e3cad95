import type { SqlExecutor } from '@hallmark/sql';
import { describe, expect, it } from 'vitest';
import { type CacheEpochs, fixedCacheEpochs } from './cache-epochs.ts';
import { createGtinSigners } from './gtin-signers.ts';
import { createSingleFlight } from './single-flight.ts';

/** A load that ends when the test says so. */
function pendingLoad<V>() {
  let calls = 0;
  let settle: { resolve(value: V): void; reject(error: Error): void } | undefined;
  const load = () => {
    calls++;
    return new Promise<V>((resolve, reject) => {
      settle = { resolve, reject };
    });
  };
  return {
    load,
    calls: () => calls,
    resolve: (value: V) => settle?.resolve(value),
    reject: (error: Error) => settle?.reject(error),
  };
}

describe('createSingleFlight', () => {
  it('callers of one key while its load runs share it; the answer is stored once', async () => {
    const flights = createSingleFlight<string>();
    const pending = pendingLoad<string>();
    const stored: string[] = [];
    const answers = Array.from({ length: 50 }, () => flights.run('k', pending.load, (value) => stored.push(value)));
    expect(pending.calls()).toBe(1);
    pending.resolve('v');
    expect(await Promise.all(answers)).toEqual(Array(50).fill('v'));
    expect(stored).toEqual(['v']);
    // Ended: the next caller loads again.
    const next = pendingLoad<string>();
    const again = flights.run('k', next.load, () => {});
    next.resolve('w');
    expect(await again).toBe('w');
    expect(next.calls()).toBe(1);
  });

  it('another key loads on its own', async () => {
    const flights = createSingleFlight<string>();
    const first = pendingLoad<string>();
    const second = pendingLoad<string>();
    const a = flights.run('a', first.load, () => {});
    const b = flights.run('b', second.load, () => {});
    first.resolve('1');
    second.resolve('2');
    expect([await a, await b]).toEqual(['1', '2']);
  });

  it('a failed load fails its callers, and the next caller tries again', async () => {
    const flights = createSingleFlight<string>();
    const failing = pendingLoad<string>();
    const answers = [flights.run('k', failing.load, () => {}), flights.run('k', failing.load, () => {})];
    failing.reject(new Error('connection lost'));
    for (const answer of answers) await expect(answer).rejects.toThrow('connection lost');
    const retry = pendingLoad<string>();
    const again = flights.run('k', retry.load, () => {});
    retry.resolve('v');
    expect(await again).toBe('v');
  });

  it('after forget, a load already running stores nothing and new callers load afresh', async () => {
    const flights = createSingleFlight<string>();
    const stale = pendingLoad<string>();
    const stored: string[] = [];
    const old = flights.run('k', stale.load, (value) => stored.push(value));
    flights.forget();
    const fresh = pendingLoad<string>();
    const current = flights.run('k', fresh.load, (value) => stored.push(value));
    expect(fresh.calls()).toBe(1);
    stale.resolve('old');
    fresh.resolve('new');
    expect([await old, await current]).toEqual(['old', 'new']);
    expect(stored).toEqual(['new']);
  });
});

describe('createGtinSigners under load', () => {
  function countingExecutor() {
    const pending = pendingLoad<Array<Record<string, unknown>>>();
    const sql = {
      query: () => pending.load(),
      execScript: async () => {},
    } as unknown as SqlExecutor;
    return { sql, pending };
  }

  it('requests that find the entry expired together send one query', async () => {
    const { sql, pending } = countingExecutor();
    const signers = createGtinSigners(sql, { cacheMs: 5_000 });
    const answers = Array.from({ length: 40 }, () => signers.signerOf('live', '09506000134352'));
    expect(pending.calls()).toBe(1);
    pending.resolve([{ account_id: 'acc_1', owned: true }]);
    for (const answer of await Promise.all(answers)) expect(answer).toEqual({ accountId: 'acc_1', owned: true });
    // Cached now: no query.
    expect(await signers.signerOf('live', '09506000134352')).toEqual({ accountId: 'acc_1', owned: true });
    expect(pending.calls()).toBe(1);
  });

  it('a grant (the epoch moved) does not join a query begun before it', async () => {
    const { sql, pending } = countingExecutor();
    let epoch = 1;
    const epochs = { ...fixedCacheEpochs, current: () => epoch } as CacheEpochs;
    const signers = createGtinSigners(sql, { epochs });
    const before = signers.signerOf('live', '09506000134352');
    epoch = 2;
    const after = signers.signerOf('live', '09506000134352');
    expect(pending.calls()).toBe(2);
    pending.resolve([{ account_id: 'acc_new', owned: true }]);
    expect(await after).toEqual({ accountId: 'acc_new', owned: true });
    void before;
  });
});
