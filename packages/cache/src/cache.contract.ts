import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cache } from './cache.ts';

/** What every cache adapter must do. */
export function describeCacheContract(name: string, create: () => Promise<Cache>): void {
  describe(`cache contract: ${name}`, () => {
    let cache: Cache;
    beforeAll(async () => {
      cache = await create();
    });
    afterAll(async () => {
      await cache?.close();
    });
    const key = (label: string) => `${label}:${randomUUID()}`;
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    it('sets, gets and deletes', async () => {
      const k = key('kv');
      expect(await cache.get(k)).toBeUndefined();
      await cache.set(k, 'v1');
      expect(await cache.get(k)).toBe('v1');
      await cache.delete(k);
      expect(await cache.get(k)).toBeUndefined();
    });

    it('expires a value after its time to live', async () => {
      const k = key('ttl');
      await cache.set(k, 'short', { ttlMs: 80 });
      expect(await cache.get(k)).toBe('short');
      await sleep(150);
      expect(await cache.get(k)).toBeUndefined();
    });

    it('sets if absent exactly once under concurrency', async () => {
      const k = key('nx');
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => cache.setIfAbsent(k, String(i), 10_000)));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('increments atomically and expires the counter', async () => {
      const k = key('incr');
      const values = await Promise.all(Array.from({ length: 100 }, () => cache.increment(k, 1, 150)));
      expect(new Set(values).size).toBe(100);
      expect(Math.max(...values)).toBe(100);
      expect(await cache.increment(k, 5, 150)).toBe(105);
      await sleep(250);
      expect(await cache.increment(k, 1, 150)).toBe(1);
    });

    const counter = (key: string, cost: number, limit: number, resetAtMs = Date.now() + 60_000) => ({
      key,
      cost,
      limit,
      resetAtMs,
    });

    it('spends a quota exactly up to its limit under concurrency', async () => {
      const k = key('quota');
      const resetAtMs = Date.now() + 60_000;
      const decisions = await Promise.all(
        Array.from({ length: 300 }, () => cache.consumeQuotas([counter(k, 1, 100, resetAtMs)])),
      );
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(100);
      const refused = decisions.find((decision) => !decision.allowed);
      expect(refused).toMatchObject({ refusedIndex: 0, counters: [{ used: 100, remaining: 0, limit: 100, resetAtMs }] });
    });

    it('gives back quota spent on refused work, never below zero and never making a counter', async () => {
      const { daily } = taggedKeys();
      const resetAtMs = Date.now() + 60_000;
      await cache.consumeQuotas([counter(daily, 5, 10, resetAtMs)]);
      await cache.refundQuotas([{ key: daily, cost: 2 }]);
      expect((await cache.consumeQuotas([counter(daily, 1, 10, resetAtMs)])).counters[0]).toMatchObject({ used: 4, resetAtMs });
      await cache.refundQuotas([{ key: daily, cost: 50 }]);
      expect((await cache.consumeQuotas([counter(daily, 1, 10, resetAtMs)])).counters[0]?.used).toBe(1);
      // Refunding a counter that does not exist (its window over) makes none.
      const gone = key('quota-gone');
      await cache.refundQuotas([{ key: gone, cost: 3 }]);
      expect((await cache.consumeQuotas([counter(gone, 1, 10)])).counters[0]?.used).toBe(1);
    });

    // Keys that share a hash tag are one account's counters in one environment, spent by all its
    // API keys; Redis spends them in batches.
    const taggedKeys = () => {
      const tag = `{acc_${randomUUID()}:live}`;
      return { burst: `rl:${tag}:s`, daily: `rl:${tag}:d`, generate: `rl:${tag}:d:generate`, verify: `rl:${tag}:d:verify` };
    };

    it("spends one account's counters exactly up to the limit when many of its requests arrive at once", async () => {
      const { burst, daily } = taggedKeys();
      const decisions = await Promise.all(
        Array.from({ length: 300 }, () => cache.consumeQuotas([counter(burst, 1, 1_000), counter(daily, 1, 100)])),
      );
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(100);
      for (const decision of decisions.filter((decision) => !decision.allowed)) {
        expect(decision).toMatchObject({ refusedIndex: 1, counters: [{ used: 100 }, { used: 100, remaining: 0 }] });
      }
      expect((await cache.consumeQuotas([counter(burst, 1, 1_000)])).counters[0]?.used).toBe(101);
    });

    it("spends an account's mixed requests exactly: plain, verify and generate ones of several keys at once", async () => {
      const { burst, daily, generate, verify } = taggedKeys();
      // As the gateway sends them: every request on the burst and the daily test counter, a verify
      // on the verify quota too, a batch of 3 on the generate quota.
      const kinds = Array.from({ length: 300 }, (_, i) => (['plain', 'verify', 'generate'] as const)[i % 3]);
      const decisions = await Promise.all(
        kinds.map((kind) =>
          cache.consumeQuotas([
            counter(burst, 1, 1_000),
            counter(daily, 1, 250),
            ...(kind === 'verify' ? [counter(verify, 1, 60)] : kind === 'generate' ? [counter(generate, 3, 90)] : []),
          ]),
        ),
      );
      const allowed = (kind: string) => decisions.filter((decision, i) => kinds[i] === kind && decision.allowed).length;
      expect([allowed('verify'), allowed('generate')]).toEqual([60, 30]);
      expect(allowed('plain')).toBe(100);
      // Every spent request is counted once on the shared counters, and nothing refused is.
      const check = await cache.consumeQuotas([counter(burst, 0, 1_000), counter(daily, 0, 250)]);
      expect(check.counters.map((state) => state.used)).toEqual([190, 190]);
      expect((await cache.consumeQuotas([counter(verify, 0, 60)])).counters[0]?.used).toBe(60);
      expect((await cache.consumeQuotas([counter(generate, 0, 90)])).counters[0]?.used).toBe(90);
    });

    it("spends one account's requests in order when they arrive at once: a refused one spends nothing", async () => {
      const { daily } = taggedKeys();
      const decisions = await Promise.all([8, 3, 2, 1].map((cost) => cache.consumeQuotas([counter(daily, cost, 10)])));
      expect(decisions.map((decision) => [decision.allowed, decision.counters[0]?.used])).toEqual([
        [true, 8],
        [false, 8],
        [true, 10],
        [false, 10],
      ]);
    });

    it('refuses a cost that does not fit and spends nothing of it', async () => {
      const k = key('fit');
      await cache.consumeQuotas([counter(k, 8, 10)]);
      expect(await cache.consumeQuotas([counter(k, 3, 10)])).toMatchObject({
        allowed: false,
        counters: [{ used: 8, remaining: 2 }],
      });
      expect(await cache.consumeQuotas([counter(k, 2, 10)])).toMatchObject({
        allowed: true,
        counters: [{ used: 10, remaining: 0 }],
      });
    });

    it('spends on several counters all or nothing, and says which one refused', async () => {
      const burst = key('burst');
      const daily = key('daily');
      expect(await cache.consumeQuotas([counter(burst, 1, 5), counter(daily, 4, 4)])).toMatchObject({
        allowed: true,
        counters: [{ used: 1 }, { used: 4 }],
      });
      expect(await cache.consumeQuotas([counter(burst, 1, 5), counter(daily, 1, 4)])).toMatchObject({
        allowed: false,
        refusedIndex: 1,
        counters: [
          { used: 1, remaining: 4 },
          { used: 4, remaining: 0 },
        ],
      });
    });

    it('reads a counter of cost 0 without spending on it: with limit 0, a marker that refuses once anything was spent on it', async () => {
      const burst = key('burst');
      const marker = key('marker');
      const far = Date.now() + 60_000;
      const check = () => cache.consumeQuotas([counter(burst, 1, 100), { key: marker, cost: 0, limit: 0, resetAtMs: far }]);
      expect(await check()).toMatchObject({ allowed: true, counters: [{ used: 1 }, { used: 0 }] });
      expect(await check()).toMatchObject({ allowed: true, counters: [{ used: 2 }, { used: 0 }] });
      await cache.consumeQuotas([{ key: marker, cost: 1, limit: Number.MAX_SAFE_INTEGER, resetAtMs: far }]);
      expect(await check()).toMatchObject({ allowed: false, refusedIndex: 1, counters: [{ used: 2 }, { used: 1 }] });
      // Refused: nothing spent on the other counter either.
      expect(await cache.consumeQuotas([counter(burst, 0, 100)])).toMatchObject({ counters: [{ used: 2 }] });
    });

    const scan = (
      subject: string,
      atMs: number,
      client: string,
      location?: { latitude: number; longitude: number; reportedBy?: string },
    ) => ({
      subject,
      atMs,
      client,
      repeatWindowMs: 10_000,
      windowMs: 60_000,
      clientWindowMs: 30_000,
      retentionMs: 3_600_000,
      ...(location ? { location: { reportedBy: 'account-a', ...location } } : {}),
    });

    it('records scans: totals, first and last seen, repeats, windows, clients and the previous location', async () => {
      const subject = key('scan');
      const t0 = 1_800_000_000_000;
      const first = await cache.recordScan(scan(subject, t0, 'a', { latitude: 48.85, longitude: 2.35 }));
      expect(first).toEqual({
        total: 1,
        firstSeenMs: t0,
        lastSeenMs: t0,
        repeat: false,
        scansInWindow: 1,
        clientsInWindow: 1,
        previousLocation: undefined,
        reported: false,
      });
      const repeat = await cache.recordScan(scan(subject, t0 + 1_000, 'a'));
      expect(repeat).toMatchObject({ total: 2, repeat: true, scansInWindow: 1, clientsInWindow: 1, previousLocation: undefined });
      const other = await cache.recordScan(scan(subject, t0 + 2_000, 'b', { latitude: 40.71, longitude: -74.0 }));
      expect(other).toMatchObject({
        total: 3,
        firstSeenMs: t0,
        lastSeenMs: t0 + 2_000,
        repeat: false,
        scansInWindow: 2,
        clientsInWindow: 2,
        previousLocation: { latitude: 48.85, longitude: 2.35, atMs: t0 },
      });
      const later = await cache.recordScan(scan(subject, t0 + 45_000, 'c'));
      expect(later).toMatchObject({ total: 4, scansInWindow: 3, clientsInWindow: 1 });
      // The repeat marker lives in real time, so a later scan here comes from another client.
      const muchLater = await cache.recordScan(scan(subject, t0 + 120_000, 'd'));
      expect(muchLater).toMatchObject({ total: 5, scansInWindow: 1 });
    });

    it('answers as the previous location only one the same party reported', async () => {
      // A location is whatever the caller typed in: another account's claim must not be the
      // owner's previous location (it made the owner's own verification GEOGRAPHIC_IMPOSSIBILITY).
      const subject = key('located');
      const t0 = 1_800_000_000_000;
      await cache.recordScan(scan(subject, t0, 'a', { latitude: 48.85, longitude: 2.35, reportedBy: 'owner' }));
      const other = await cache.recordScan(
        scan(subject, t0 + 1_000, 'b', { latitude: 35.68, longitude: 139.69, reportedBy: 'other' }),
      );
      expect(other.previousLocation).toBeUndefined();
      const owner = await cache.recordScan(
        scan(subject, t0 + 2_000, 'c', { latitude: 48.86, longitude: 2.34, reportedBy: 'owner' }),
      );
      expect(owner.previousLocation).toEqual({ latitude: 48.85, longitude: 2.35, atMs: t0 });
      const otherAgain = await cache.recordScan(
        scan(subject, t0 + 3_000, 'd', { latitude: 35.7, longitude: 139.7, reportedBy: 'other' }),
      );
      expect(otherAgain.previousLocation).toEqual({ latitude: 35.68, longitude: 139.69, atMs: t0 + 1_000 });
    });

    it('counts every scan when the repeat window is 0 (a tenant’s repeatWindowSeconds: 0), never failing', async () => {
      // Redis refused SET PX 0, so every verification of that tenant's codes answered 500.
      const subject = key('no-repeat-window');
      const t0 = 1_800_000_000_000;
      const first = await cache.recordScan({ ...scan(subject, t0, 'a'), repeatWindowMs: 0 });
      const again = await cache.recordScan({ ...scan(subject, t0 + 1, 'a'), repeatWindowMs: 0 });
      expect(first).toMatchObject({ total: 1, repeat: false, scansInWindow: 1 });
      expect(again).toMatchObject({ total: 2, repeat: false, scansInWindow: 2 });
    });

    it('estimates the sliding window from the previous fixed window', async () => {
      const subject = key('slide');
      const start = 1_800_000_000_000; // the start of a 60 s window
      for (let i = 0; i < 10; i++) await cache.recordScan(scan(subject, start + i * 1000, `c${i}`));
      // 15 s into the next window the sliding window still covers three quarters of the previous one.
      expect((await cache.recordScan(scan(subject, start + 75_000, 'late'))).scansInWindow).toBe(1 + Math.floor(10 * 0.75));
    });

    it('counts every one of many concurrent scans exactly once', async () => {
      const subject = key('burst');
      const records = await Promise.all(
        Array.from({ length: 200 }, (_, i) => cache.recordScan(scan(subject, Date.now(), `client-${i}`))),
      );
      expect(records.map((record) => record.total).sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    });

    it('marks a subject as reported', async () => {
      const subject = key('reported');
      await cache.markReported(subject, 3_600_000);
      expect((await cache.recordScan(scan(subject, Date.now(), 'x'))).reported).toBe(true);
    });

    it('starts a new window once the old one has ended', async () => {
      const k = key('window');
      await cache.consumeQuotas([counter(k, 1, 1, Date.now() + 100)]);
      expect((await cache.consumeQuotas([counter(k, 1, 1, Date.now() + 100)])).allowed).toBe(false);
      await sleep(200);
      expect((await cache.consumeQuotas([counter(k, 1, 1, Date.now() + 100)])).allowed).toBe(true);
    });
  });
}
