import { HallmarkError } from '@hallmark/contracts';
import { isConnectionError } from '@hallmark/sql';

/** ioredis's words for a connection that is gone or not there yet (its errors carry no code for these). */
const redisOutage = /^(Connection is closed|Stream isn't writeable|Reached the max retries per request limit)/;

/**
 * True for an error that says a store is unreachable (PostgreSQL's connection lost or refused, a
 * Redis connection closed), not that the request was wrong: a client should retry it shortly.
 */
export function isDependencyOutage(error: unknown): boolean {
  if (isConnectionError(error)) return true;
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
