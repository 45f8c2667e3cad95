import type { SqlExecutor } from '@hallmark/sql';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { watchCacheEpochs } from './cache-epochs.ts';

/** A database answering the epochs query from `values`, counting its statements. */
function fakeDatabase(values: { api_keys: number; verification_keys: number; gtin_claims: number }) {
  const db = {
    statements: 0,
    async query<Row>(): Promise<Row[]> {
      db.statements += 1;
      return Object.entries(values).map(([name, value]) => ({ name, value: String(value) })) as Row[];
    },
    async execScript() {},
  };
  return db as typeof db & SqlExecutor;
}

describe('watchCacheEpochs', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('one poll for every watcher of the same database (the embedded form’s services), each seeing its epochs', async () => {
    vi.useFakeTimers();
    const values = { api_keys: 1, verification_keys: 2, gtin_claims: 3 };
    const db = fakeDatabase(values);
    const watchers = [];
    for (let index = 0; index < 5; index++) watchers.push(await watchCacheEpochs(db));
    // Each watcher's first read happened before it resolved.
    expect(db.statements).toBe(5);
    for (const watcher of watchers) expect(watcher.current('verification_keys')).toBe(2);

    values.verification_keys = 7;
    await vi.advanceTimersByTimeAsync(500);
    expect(db.statements).toBe(6);
    for (const watcher of watchers) expect(watcher.current('verification_keys')).toBe(7);

    // The poll goes on while anyone watches, and stops with the last.
    for (const watcher of watchers.slice(0, 4)) await watcher.stop();
    await vi.advanceTimersByTimeAsync(500);
    expect(db.statements).toBe(7);
    await watchers[4]?.stop();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(db.statements).toBe(7);

    // A new watcher after that starts a poll of its own again.
    const later = await watchCacheEpochs(db);
    await vi.advanceTimersByTimeAsync(500);
    expect(db.statements).toBe(9);
    await later.stop();
  });

  it('another database or another interval polls apart; a failed poll is told to every watcher', async () => {
    vi.useFakeTimers();
    const first = fakeDatabase({ api_keys: 0, verification_keys: 0, gtin_claims: 0 });
    const second = fakeDatabase({ api_keys: 5, verification_keys: 0, gtin_claims: 0 });
    const errors: string[] = [];
    const a = await watchCacheEpochs(first, { onError: () => errors.push('a') });
    const b = await watchCacheEpochs(first, { onError: () => errors.push('b') });
    const fast = await watchCacheEpochs(first, { pollMs: 100 });
    const other = await watchCacheEpochs(second);
    expect(other.current('api_keys')).toBe(5);
    expect(a.current('api_keys')).toBe(0);
    first.statements = 0;
    await vi.advanceTimersByTimeAsync(500);
    // The 500 ms poll once, the 100 ms poll five times.
    expect(first.statements).toBe(6);

    first.query = async () => {
      throw new Error('database away');
    };
    await vi.advanceTimersByTimeAsync(500);
    expect(errors.sort()).toEqual(['a', 'b']);
    for (const watcher of [a, b, fast, other]) await watcher.stop();
  });

  it('a refresh sees a change made before it, even while the timer’s read of before the change is in flight', async () => {
    vi.useFakeTimers();
    const values = { api_keys: 1, verification_keys: 0, gtin_claims: 0 };
    const db = fakeDatabase(values);
    const watcher = await watchCacheEpochs(db, { pollMs: 100 });
    // The timer's read takes the values as they are when it begins, and answers later.
    let answerHeld: () => void = () => {};
    db.query = async <Row>(): Promise<Row[]> => {
      db.statements += 1;
      const seen = Object.entries(values).map(([name, value]) => ({ name, value: String(value) })) as Row[];
      await new Promise<void>((resolve) => {
        answerHeld = resolve;
      });
      return seen;
    };
    await vi.advanceTimersByTimeAsync(100);
    expect(db.statements).toBe(2);

    values.api_keys = 2;
    const refreshes = [watcher.refresh(), watcher.refresh()];
    answerHeld();
    await vi.advanceTimersByTimeAsync(0);
    // The read begun before the change answered 1; the refreshes wait for one more, shared.
    expect(watcher.current('api_keys')).toBe(1);
    expect(db.statements).toBe(3);
    answerHeld();
    await Promise.all(refreshes);
    expect(watcher.current('api_keys')).toBe(2);
    expect(db.statements).toBe(3);
    const stopping = watcher.stop();
    answerHeld();
    await stopping;
  });
});
