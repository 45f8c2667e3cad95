import { describe, expect, it } from 'vitest';
import { checkReadiness } from './readiness.ts';

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
