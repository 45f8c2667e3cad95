// The overview's periods as whole UTC buckets. GET /scans/aggregates rounds `from` down and `to` up
// to whole hours or days, so a range of "now − 7 days" would grow to parts of 8 calendar days; these
// ranges are already whole buckets, so the API counts exactly what the label says.

export type Bucket = 'hour' | 'day';

export interface Period {
  /** Stable name for the page (data-period) and tests. */
  id: '24h' | '7d' | '30d';
  label: string;
  /** The label under the chart's bars, where the full one has no room on a phone. */
  short: string;
  bucket: Bucket;
  /** How many buckets: the current one (so far) and count − 1 before it. */
  count: number;
}

export const periods: readonly Period[] = [
  { id: '24h', label: 'Last 24 hours (UTC)', short: 'Last 24 h', bucket: 'hour', count: 24 },
  { id: '7d', label: 'Last 7 days (UTC)', short: 'Last 7 days', bucket: 'day', count: 7 },
  { id: '30d', label: 'Last 30 days (UTC)', short: 'Last 30 days', bucket: 'day', count: 30 },
];

const hourMs = 3_600_000;
const dayMs = 24 * hourMs;

/** [from, to) of a period at `now`: the current UTC hour or day and the `count − 1` before it. */
export function periodRange(period: Pick<Period, 'bucket' | 'count'>, now: Date): { from: Date; to: Date } {
  const unit = period.bucket === 'hour' ? hourMs : dayMs;
  const current = Math.floor(now.getTime() / unit) * unit;
  return { from: new Date(current - (period.count - 1) * unit), to: new Date(current + unit) };
}
