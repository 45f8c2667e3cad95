import { HallmarkError } from '@hallmark/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * A body over this many bytes is large: only a batch's route takes one (up to 16 MiB; every other
 * JSON route stops at HALLMARK_BODY_LIMIT_BYTES, 1 MiB by default). A batch of 10,000 codes without
 * metadata is about 0.7 MB; only metadata makes one larger.
 */
export const largeBodyBytes = 1024 * 1024;

export interface LargeBodyLimits {
  /** Large bodies this gateway reads and works on at once, over all accounts (HALLMARK_LARGE_BODIES_AT_ONCE). */
  atOnce: number;
  /** Bytes of large bodies one account may send this gateway a second, on average (HALLMARK_LARGE_BODY_BYTES_PER_SECOND). */
  bytesPerSecond: number;
  /** What an account may send at once when it has sent none for a while: the largest body any route takes. */
  burstBytes: number;
  /** Milliseconds, monotonic (performance.now by default). */
  now?: () => number;
}

/**
 * Bounds what one tenant's large request bodies cost a gateway, before they are read (the review of
 * noisy neighbours, 2026-12-04). A body is held in memory whole, then parsed, checked and split on
 * the event loop that serves every tenant: a 16 MiB body of small JSON values takes that loop a
 * second or more. Before, a free tenant held 32 such bodies open at once, their last bytes held back
 * (+912 MiB of memory), or sent them one after another with items refused for their size (their
 * quota given back), and another tenant's verifications waited seconds each.
 *
 * So a keyed request whose declared body is over {@link largeBodyBytes} (not a multipart upload,
 * which has its own slots: upload-slots.ts) is let in only
 * - while the gateway works on fewer than `atOnce` large bodies (else 503 SERVICE_UNAVAILABLE,
 *   Retry-After: 1), and its account on fewer than a quarter of them (at least 1; else 429
 *   RATE_LIMITED, Retry-After: 1): held from before its body is read until its answer is sent or
 *   its connection closes;
 * - and when its account's budget of large-body bytes on this gateway covers it: `burstBytes` at
 *   most, refilled at `bytesPerSecond` (else 429 RATE_LIMITED, Retry-After the seconds until it
 *   does). Work per byte is bounded (parsing, checking, splitting), so this bounds the share of a
 *   gateway's event loop one account's bodies take.
 * Per gateway process (not shared between replicas): what is protected is each process's memory and
 * event loop. A body without a Content-Length (chunked) counts as the route's largest.
 */
export function installLargeBodyLimits(app: FastifyInstance, limits: LargeBodyLimits): void {
  const now = limits.now ?? (() => performance.now());
  const perAccount = Math.max(1, Math.floor(limits.atOnce / 4));
  let held = 0;
  const heldBy = new Map<string, number>();
  const budgets = new Map<string, { bytes: number; atMs: number }>();

  /** The account's budget now, refilled since it was last spent; a full one is forgotten. */
  const budgetOf = (account: string, atMs: number) => {
    const last = budgets.get(account);
    if (!last) return limits.burstBytes;
    const bytes = Math.min(limits.burstBytes, last.bytes + ((atMs - last.atMs) * limits.bytesPerSecond) / 1000);
    if (bytes >= limits.burstBytes) budgets.delete(account);
    return bytes;
  };

  const refuse = (reply: FastifyReply, error: HallmarkError, retryAfterSeconds: number) => {
    reply.header('retry-after', String(retryAfterSeconds));
    // The body is not read: the connection closes after the answer rather than read megabytes for nothing.
    reply.header('connection', 'close');
    return error;
  };

  const admit = (request: FastifyRequest, reply: FastifyReply): HallmarkError | undefined => {
    // Every request comes here: the size first, which rules out nearly all of them.
    const limit = request.routeOptions.bodyLimit ?? largeBodyBytes;
    const length = request.headers['content-length'];
    const declared = length === undefined ? limit : Number(length);
    // Over the route's limit: fastify answers 413 without reading it.
    if (!(declared > largeBodyBytes) || declared > limit) return undefined;
    const account = request.apiKey?.accountId;
    if (account === undefined || /^multipart\//i.test(request.headers['content-type'] ?? '')) return undefined;
    if (held >= limits.atOnce) {
      return refuse(
        reply,
        new HallmarkError('SERVICE_UNAVAILABLE', 'Too many large request bodies are being read; retry in a moment.', {
          retryAfterSeconds: 1,
        }),
        1,
      );
    }
    const ownHeld = heldBy.get(account) ?? 0;
    if (ownHeld >= perAccount) {
      return refuse(
        reply,
        new HallmarkError(
          'RATE_LIMITED',
          `This account has ${perAccount} request bodies over 1 MiB being read on this gateway already, the most it may; send the next once one is answered.`,
          { limit: perAccount, retryAfterSeconds: 1 },
        ),
        1,
      );
    }
    const atMs = now();
    const budget = budgetOf(account, atMs);
    if (budget < declared) {
      const retryAfterSeconds = Math.max(1, Math.ceil((declared - budget) / limits.bytesPerSecond));
      return refuse(
        reply,
        new HallmarkError(
          'RATE_LIMITED',
          `This account sends request bodies over 1 MiB faster than one gateway takes them (${limits.bytesPerSecond} bytes a second on average); send this one in ${retryAfterSeconds} s, or smaller batches.`,
          { limit: limits.bytesPerSecond, retryAfterSeconds },
        ),
        retryAfterSeconds,
      );
    }
    budgets.set(account, { bytes: budget - declared, atMs });
    held += 1;
    heldBy.set(account, ownHeld + 1);
    reply.raw.once('close', () => {
      held -= 1;
      const left = (heldBy.get(account) ?? 1) - 1;
      if (left > 0) heldBy.set(account, left);
      else heldBy.delete(account);
    });
    return undefined;
  };

  app.addHook('preParsing', (request, reply, payload, done) => {
    const refusal = admit(request, reply);
    if (refusal) return done(refusal);
    done(null, payload);
  });
}
