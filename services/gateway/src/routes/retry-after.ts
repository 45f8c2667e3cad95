import { HallmarkError } from '@hallmark/contracts';
import type { FastifyReply } from 'fastify';

/**
 * Runs a service call; when the service refuses for being busy or for a limit (SERVICE_UNAVAILABLE or
 * RATE_LIMITED with `details.retryAfterSeconds`), sets Retry-After on the reply before the error is answered.
 */
export async function withRetryAfter<T>(reply: FastifyReply, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const seconds = error instanceof HallmarkError ? error.details?.retryAfterSeconds : undefined;
    if (
      error instanceof HallmarkError &&
      (error.code === 'SERVICE_UNAVAILABLE' || error.code === 'RATE_LIMITED') &&
      typeof seconds === 'number'
    ) {
      reply.header('retry-after', String(Math.max(1, Math.ceil(seconds))));
    }
    throw error;
  }
}
