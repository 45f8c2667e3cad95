import type { SqlExecutor } from '@hallmark/sql';

/** How far ahead of its clock a replica writes the lease (`checkpoint_clock`, migration 0010). */
export const checkpointLeaseMs = 1_000;

/**
 * The time a checkpoint signed now carries. A checkpoint says the tree had its size at its time, so
 * an auditor asking for "the history as of T or later" takes the newest-dated checkpoint as the most
 * complete: a clock stepped back must not date a larger tree before a smaller one.
 *
 * Every time handed out is within a lease held in the database (`checkpoint_clock.lease_until`),
 * which a replica moves to its clock plus `leaseMs` before handing out a time past it, and again in
 * the background once half of it has gone: one write a second per replica, not one a checkpoint.
 * The time handed out is the clock's, but never before one this process handed out already (kept
 * in memory), nor more than `leaseMs` before a lease another replica (or this one before a restart)
 * wrote: a clock that stepped back dates checkpoints at the latest such time until it catches up.
 * So a checkpoint is never dated before one this replica signed, nor more than `leaseMs` before one
 * any replica signed (clocks that far apart, or a step back of under `leaseMs` across a restart).
 */
export function createCheckpointClock(db: SqlExecutor, clock: () => Date, leaseMs = checkpointLeaseMs) {
  let leaseUntil = Number.NEGATIVE_INFINITY;
  let latest = Number.NEGATIVE_INFINITY;
  let renewing: Promise<void> | undefined;
  const renew = (now: number): Promise<void> => {
    renewing ??= db
      .query<{ lease_until: Date | string }>(
        'UPDATE checkpoint_clock SET lease_until = greatest(lease_until, $1::timestamptz) RETURNING lease_until',
        [new Date(now + leaseMs)],
      )
      .then((rows) => {
        const until = rows[0] ? new Date(rows[0].lease_until).getTime() : Number.NaN;
        if (!Number.isFinite(until)) throw new Error('checkpoint_clock has no row (compliance migration 0010)');
        leaseUntil = Math.max(leaseUntil, until);
        // A lease further ahead than the one asked for: another clock runs ahead of this one.
        latest = Math.max(latest, until - leaseMs);
      })
      .finally(() => {
        renewing = undefined;
      });
    return renewing;
  };
  return async (): Promise<Date> => {
    const now = clock().getTime();
    if (now > leaseUntil) await renew(now);
    else if (now > leaseUntil - leaseMs / 2) renew(now).catch(() => {}); // the next one past the lease waits for it
    latest = Math.max(latest, now);
    return new Date(latest);
  };
}
