import { describe, expect, it } from 'vitest';
import { checkReadiness, createSharedReadiness } from './readiness.ts';

describe('checkReadiness', () => {
  it('is ready when every check passes', async () => {
    const report = await checkReadiness({ a: async () => {}, b: async () => {} });
    expect(report.ready).toBe(true);
    expect(Object.keys(report.checks)).toEqual(['a', 'b']);
  });

  it('is not ready when a check fails or hangs, and says which and why', async () => {
    const report = await checkReadiness(
      {
        ok: async () => {},
        down: async () => Promise.reject(new Error('connection refused')),
        hung: () => new Promise(() => {}),
      },
      100,
    );
    expect(report.ready).toBe(false);
    expect(report.checks.ok?.ok).toBe(true);
    expect(report.checks.down).toMatchObject({ ok: false, error: 'connection refused' });
    expect(report.checks.hung).toMatchObject({ ok: false, error: 'no answer within 100 ms' });
  });
});

describe('createSharedReadiness (a public /ready)', () => {
  it('checks once a window however often it is asked, and shows no error text but a timeout', async () => {
    let pings = 0;
    const failures: unknown[] = [];
    const readiness = createSharedReadiness(
      {
        database: async () => {
          pings += 1;
          throw new Error('connect ECONNREFUSED 10.0.3.4:5432 (db-internal.example)');
        },
        cache: async () => {},
      },
      { everyMs: 200, onFailure: (report) => failures.push(report.checks.database?.error) },
    );
    const reports = await Promise.all(Array.from({ length: 50 }, () => readiness()));
    expect(pings).toBe(1);
    expect(reports[49]).toMatchObject({
      ready: false,
      checks: { database: { ok: false, error: 'unreachable' }, cache: { ok: true } },
    });
    expect(JSON.stringify(reports[0])).not.toContain('10.0.3.4');
    // The log is told what happened, once.
    expect(failures).toEqual(['connect ECONNREFUSED 10.0.3.4:5432 (db-internal.example)']);
    await new Promise((resolve) => setTimeout(resolve, 220));
    await readiness();
    expect(pings).toBe(2);
  });
});
