import { HallmarkError } from '@hallmark/contracts';
import { createWorkSlots } from '@hallmark/runtime';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { principalOf } from './auth/request-auth.ts';
import { beforeAbort, ClientGone, watchRequest } from './request-watch.ts';
import { withRetryAfter } from './routes/retry-after.ts';

/** Reads an upload's body (`reading`), failing as soon as the request is given up on (see `UploadSlots.run`). */
export type ReceiveBody = <T>(reading: Promise<T>) => Promise<T>;

/**
 * The gateway's upload slots, shared by photo uploads and brand logos: each upload is held in
 * memory while it is checked and stored, so only `atOnce` run at once, as many wait, and beyond that
 * the answer is 503 with Retry-After (docs/SECURITY.md, "Bounded work per request").
 *
 * A slot is held for as long as its upload takes, so nobody may keep one without sending:
 * - one account holds at most half of the slots and half of the waiting places (at least one of
 *   each); its next upload is 503 at once, and other accounts' uploads go ahead;
 * - an upload must have got its slot and its whole body within `requestTimeoutMs` of the request's
 *   start (HALLMARK_HTTP_REQUEST_TIMEOUT_MS, enforced here to the millisecond rather than at Node's
 *   next check); after that it is answered 408 REQUEST_TIMEOUT, its connection closed and its slot
 *   or place freed;
 * - an upload whose client's connection closes leaves its place in the queue without ever taking a
 *   slot, or stops reading its body and frees its slot, and is not answered (nobody could read it).
 */
export interface UploadSlots {
  /**
   * Runs `work` for `request` in a slot. `work` reads the body through `receive`, which fails as
   * soon as the deadline passes or the client leaves. Resolves undefined, having answered nothing,
   * when the client left.
   */
  run<T>(request: FastifyRequest, reply: FastifyReply, work: (receive: ReceiveBody) => Promise<T>): Promise<T | undefined>;
}

export function createUploadSlots(limits: { atOnce: number; requestTimeoutMs: number }): UploadSlots {
  const share = Math.max(1, Math.floor(limits.atOnce / 2));
  const slots = createWorkSlots({
    running: limits.atOnce,
    waiting: limits.atOnce,
    perOwner: {
      running: share,
      waiting: share,
      busy: `This account already has as many uploads in progress as one account may (${share} at once, ${share} waiting)`,
    },
    retryAfterSeconds: 1,
    busy: 'Too many photos are being uploaded',
  });
  const tooSlow = () =>
    new HallmarkError(
      'REQUEST_TIMEOUT',
      `The upload was not received in time: it must arrive within ${limits.requestTimeoutMs / 1000} s of the request's start.`,
    );

  return {
    async run(request, reply, work) {
      const watch = watchRequest(request, { inMs: limits.requestTimeoutMs - reply.elapsedTime, reason: tooSlow });
      const receive: ReceiveBody = (reading) => beforeAbort(watch.signal, reading);
      try {
        return await withRetryAfter(reply, () =>
          slots.run(() => work(receive), { owner: principalOf(request).accountId, signal: watch.signal }),
        );
      } catch (error) {
        if (error instanceof ClientGone) {
          request.log.info({ method: request.method, url: request.url }, 'client left before its upload was done; not answered');
          reply.hijack();
          return undefined;
        }
        // The rest of the body is not waited for: the connection closes once the 408 is sent.
        if (error instanceof HallmarkError && error.code === 'REQUEST_TIMEOUT') reply.header('connection', 'close');
        throw error;
      } finally {
        watch.stop();
      }
    },
  };
}
