import { HallmarkError } from '@hallmark/contracts';
import { isConnectionError, isPoolWaitTimeout } from '@hallmark/sql';

/** ioredis's words for a connection that is gone, not there yet or not answering (its errors carry no code for these). */
const redisOutage = /^(Connection is closed|Stream isn't writeable|Reached the max retries per request limit|Command timed out)/;

/**
 * True for an error that says a store is unreachable or saturated (PostgreSQL's connection lost or
 * refused, or none of the pool's free within its wait; a Redis connection closed, or a command
 * unanswered within its timeout), not that the request was wrong: a client should retry it shortly.
 */
export function isDependencyOutage(error: unknown): boolean {
  if (isConnectionError(error) || isPoolWaitTimeout(error)) return true;
  return error instanceof Error && (error.name === 'MaxRetriesPerRequestError' || redisOutage.test(error.message));
}

/** A store outage as the answer a client can act on: 503 with a retry hint, not 500. */
export function outageAsUnavailable(error: unknown): unknown {
  if (!isDependencyOutage(error)) return error;
  return new HallmarkError('SERVICE_UNAVAILABLE', 'A store this service needs is unreachable; retry shortly.', {
    reason: 'dependency',
    retryAfterSeconds: 1,
  });
}
