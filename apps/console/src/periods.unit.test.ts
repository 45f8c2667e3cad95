import { describe, expect, it } from 'vitest';
import { periodRange, periods } from './periods.ts';

const byId = (id: string) => periods.find((period) => period.id === id)!;
const iso = (range: { from: Date; to: Date }) => ({ from: range.from.toISOString(), to: range.to.toISOString() });

describe('the overview’s periods', () => {
  const now = new Date('2026-01-15T09:29:58.123Z');

  it('24 hours: the current UTC hour and the 23 before, by hour', () => {
    expect(iso(periodRange(byId('24h'), now))).toEqual({ from: '2026-01-14T10:00:00.000Z', to: '2026-01-15T10:00:00.000Z' });
  });

  it('7 days: today (UTC) and the 6 days before, by day', () => {
    expect(iso(periodRange(byId('7d'), now))).toEqual({ from: '2026-01-09T00:00:00.000Z', to: '2026-01-16T00:00:00.000Z' });
  });

  it('30 days: today (UTC) and the 29 days before, across a month and a year', () => {
    expect(iso(periodRange(byId('30d'), now))).toEqual({ from: '2025-12-17T00:00:00.000Z', to: '2026-01-16T00:00:00.000Z' });
  });

  it('at the first instant of a day or an hour, that day or hour is the current one', () => {
    const midnight = new Date('2026-03-01T00:00:00.000Z');
    expect(iso(periodRange(byId('7d'), midnight))).toEqual({ from: '2026-02-23T00:00:00.000Z', to: '2026-03-02T00:00:00.000Z' });
    expect(iso(periodRange(byId('24h'), midnight))).toEqual({ from: '2026-02-28T01:00:00.000Z', to: '2026-03-01T01:00:00.000Z' });
    const lastInstant = new Date('2026-02-28T23:59:59.999Z');
    expect(iso(periodRange(byId('7d'), lastInstant))).toEqual({
      from: '2026-02-22T00:00:00.000Z',
      to: '2026-03-01T00:00:00.000Z',
    });
  });

  it('is exactly `count` whole buckets holding now, so the API’s rounding (from down, to up) changes nothing', () => {
    for (const period of periods) {
      const unit = period.bucket === 'hour' ? 3_600_000 : 86_400_000;
      for (let step = 0; step < 500; step += 1) {
        const at = new Date(Date.UTC(2024, 0, 1) + step * 7_777_777 + (step % 7) * 13);
        const { from, to } = periodRange(period, at);
        // The API's rangeOf (services/verify-service/src/handlers/scans.ts): floor(from), ceil(to).
        expect(Math.floor(from.getTime() / unit) * unit).toBe(from.getTime());
        expect(Math.ceil(to.getTime() / unit) * unit).toBe(to.getTime());
        expect((to.getTime() - from.getTime()) / unit).toBe(period.count);
        expect(from.getTime()).toBeLessThanOrEqual(at.getTime());
        expect(to.getTime()).toBeGreaterThan(at.getTime());
        expect(to.getTime() - at.getTime()).toBeLessThanOrEqual(unit);
      }
    }
  });

  it('says UTC in every label', () => {
    for (const period of periods) expect(period.label).toMatch(/\(UTC\)$/);
  });
});
