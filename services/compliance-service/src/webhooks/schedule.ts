/** Standard Webhooks' retry schedule after the first attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const standardRetryScheduleMs = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const;

/** A Retry-After longer than this (10 h) is taken as 10 h. */
const maxRetryAfterMs = 36_000_000;

/**
 * When to try again after `failedAttempts` failures, or undefined when the schedule is spent. A
 * Retry-After the receiver sent delays it further (never sooner than the schedule), up to 10 h
 * (the standard schedule's longest wait).
 */
export function nextDelayMs(schedule: readonly number[], failedAttempts: number, retryAfterSeconds?: number): number | undefined {
  const planned = schedule[failedAttempts - 1];
  if (planned === undefined) return undefined;
  if (retryAfterSeconds === undefined) return planned;
  return Math.max(planned, Math.min(retryAfterSeconds * 1000, maxRetryAfterMs));
}

/**
 * How long an endpoint is held back after `failuresInRow` failed attempts in a row: the schedule's
 * step for that many (its last step past its end), at least what Retry-After asked, up to 10 h.
 * Undefined for an empty schedule (nothing is retried, so nothing waits).
 */
export function endpointHoldMs(
  schedule: readonly number[],
  failuresInRow: number,
  retryAfterSeconds?: number,
): number | undefined {
  if (schedule.length === 0) return undefined;
  return nextDelayMs(schedule, Math.min(Math.max(1, failuresInRow), schedule.length), retryAfterSeconds);
}

/** The longest a message or an endpoint can be made to wait by the schedule or a Retry-After. */
export const longestWaitMs = (schedule: readonly number[]): number => Math.max(maxRetryAfterMs, ...schedule);

/** Parses HALLMARK_WEBHOOK_RETRY_SCHEDULE_MS ("5000,300000,…"). */
export function parseSchedule(text: string): number[] {
  const delays = text.split(',').map((part) => Number(part.trim()));
  if (delays.length === 0 || delays.some((delay) => !Number.isInteger(delay) || delay < 0)) {
    throw new Error('HALLMARK_WEBHOOK_RETRY_SCHEDULE_MS: comma-separated milliseconds');
  }
  return delays;
}
