import {
  type BatchItemResult,
  codeQrRoute,
  confirmCodeReportRoute,
  type DecideReportBody,
  decideCodeReportRpc,
  dismissCodeReportRoute,
  type GenerateBatchBody,
  type GenerateCodeBody,
  generateCodeBatchRoute,
  generateCodeRoute,
  generateCodeRpc,
  generateCodesRpc,
  HallmarkError,
  type ListCodeReportsQuery,
  liftCodeReportRoute,
  listCodeReportsRoute,
  listCodeReportsRpc,
  type QrQuery,
  type ReportCodeBody,
  renderQrRpc,
  reportCodeRoute,
  reportCodeRpc,
  type VerifyCodeBody,
  verifyCodeRoute,
  verifyCodeRpc,
} from '@hallmark/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ReportLimits } from '../auth/report-limits.ts';
import { principalOf, requireApiKey } from '../auth/request-auth.ts';
import { requestKeyField } from '../idempotency.ts';
import { leavePrepaid, madeByEarlierAttempt, prepaidFor, provesWorkUndone } from '../prepaid-work.ts';
import { registerRoute } from '../route-registry.ts';
import { mayHaveActed, type ServiceCaller } from '../service-call.ts';
import { chunkStartsOf, chunksToWaitFor, isOversizedItem, maxBatchItemBytes } from './batch-chunks.ts';
import { withRetryAfter } from './retry-after.ts';

/**
 * Calls to code-service in flight for a batch (each of at most 500 items and 384 KB: batch-chunks.ts):
 * 4 in the embedded form, where one chunk's JavaScript runs while PGlite writes another's (2 made
 * 7–13% fewer codes a second there, 2026-12-07), 2 in the distributed form, where more only lengthen
 * the queue in code-service that other tenants' requests wait in (4 against 2, one tenant's two
 * batches running: another tenant's single generates took p50 233 against 120 ms and p99 573 against
 * 244 ms, at the same batch rate). A tenant that wants more sends more batches at once.
 */
export function batchChunksInFlightOf(engine: 'pglite' | 'postgres'): number {
  return engine === 'pglite' ? 4 : 2;
}

const clientOf = (request: FastifyRequest) => ({ keyId: requireApiKey(request).keyId, address: request.ip });

/** POST /code/generate, POST /code/verify, POST /code/report, GET /code/qr, the reports' review queue. */
export function registerCodeRoutes(
  app: FastifyInstance,
  deps: { services: ServiceCaller; reportLimits: ReportLimits; batchChunksInFlight: number },
): void {
  const { batchChunksInFlight } = deps;
  registerRoute(app, generateCodeRoute, async (request, reply) => {
    // An Idempotency-Key is handled before this runs (idempotency.ts), as on every route that creates something.
    const { madeBefore, ...generated } = await deps.services.call(
      generateCodeRpc,
      { principal: principalOf(request), body: request.body as GenerateCodeBody, ...requestKeyField(request) },
      request.id,
    );
    // A rerun whose first answer was lost is answered the code that attempt made and paid for: it spends nothing again.
    if (madeBefore) madeByEarlierAttempt(request);
    reply.status(201);
    return generated;
  });

  registerRoute(app, generateCodeBatchRoute, async (request) => {
    const { items } = request.body as GenerateBatchBody;
    const principal = principalOf(request);
    const requestKey = requestKeyField(request);
    const chunks = chunkStartsOf(items);
    const results: BatchItemResult[][] = new Array(chunks.length);
    /**
     * What each answered chunk is paid for: its codes (made now, or before and answered so), and a
     * prepaid chunk's items refused for a reason that does not prove its earlier attempt's work undone.
     */
    const paidByChunk: number[] = new Array(chunks.length);
    // A few chunks at a time: replicas of code-service share them, and no message passes NATS's 1 MB.
    // Once one fails no other is started: the batch answers that failure.
    let next = 0;
    let failed = false;
    // A chunk repeating a GTIN and serial of an earlier chunk is sent once that one has been answered,
    // so the earlier item takes the serial (chunks are picked in order: what one waits for is under way).
    const waitFor = chunksToWaitFor(items, chunks);
    const sent: Array<Promise<void>> = [];
    const worker = async () => {
      while (next < chunks.length && !failed) {
        const chunk = next++;
        sent[chunk] = sendChunk(chunk);
        await sent[chunk];
      }
    };
    /** Sends one chunk to code-service and counts what it made; a chunk after a failed one is not sent. */
    const sendChunk = async (chunk: number) => {
      const earlier = waitFor[chunk] ?? [];
      if (earlier.length > 0) {
        await Promise.allSettled(earlier.map((each) => sent[each]));
        if (failed) return;
      }
      const firstIndex = chunks[chunk] as number;
      const chunkItems = items.slice(firstIndex, chunks[chunk + 1] ?? items.length);
      // An item too large to be valid is alone in its chunk (batch-chunks.ts): refused here, unsent.
      if (chunkItems.length === 1 && isOversizedItem(items, firstIndex)) {
        results[chunk] = [
          {
            index: firstIndex,
            error: {
              code: 'VALIDATION_ERROR',
              message: `The item is larger than ${maxBatchItemBytes / 1024} KiB as JSON (metadata may be 16 KiB).`,
              details: { fields: [{ field: 'metadata', in: 'body', message: 'is larger than 16 KiB as JSON' }] },
            },
          },
        ];
        return;
      }
      // A batch outlasts its key's check (preValidation): a key revoked meanwhile, through any
      // gateway, sends no further chunk, and the batch answers its 401 (the chunks answered before
      // keep their codes). The first chunk follows that check at once.
      if (chunk >= batchChunksInFlight) {
        await request.server.confirmKeyStillWorks(request).catch((error: unknown) => {
          failed = true;
          throw error;
        });
        if (failed) return;
      }
      // What an earlier attempt with this Idempotency-Key kept for this chunk, unsure it was made (prepaid-work.ts).
      const prepaid = prepaidFor(request, firstIndex);
      const answer = await deps.services
        .call(generateCodesRpc, { principal, items: chunkItems, firstIndex, ...requestKey }, request.id)
        .catch((error: unknown) => {
          failed = true;
          // A chunk code-service did not answer in time may have stored every one of its codes:
          // they stay paid for, all of them (what an earlier attempt prepaid for the chunk and what
          // this one spent on it), and a retry with the key spends nothing for them again.
          if (mayHaveActed(error)) {
            charged += chunkItems.length - prepaid;
            leftPrepaid[firstIndex] = chunkItems.length;
          }
          throw error;
        });
      results[chunk] = answer.results;
      const made = answer.results.filter((result) => 'code' in result).length;
      // A prepaid chunk was paid for by the earlier attempt as far as it was prepaid (this one spent
      // the rest of its items): this one keeps what its codes need beyond that, and what was
      // prepaid beyond its codes is the earlier attempt's to get back (credit), as far as the items'
      // refusals prove that attempt did not make them and never will (prepaid-work.ts,
      // provesWorkUndone); the rest stays paid for. Otherwise the codes an earlier attempt made
      // (its answer was lost) were paid for by it.
      if (prepaid > 0) {
        const undone = answer.results.filter((result) => 'error' in result && provesWorkUndone(result.error)).length;
        const given = Math.min(Math.max(0, prepaid - made), undone);
        charged += Math.max(0, made - prepaid);
        credit += given;
        paidByChunk[chunk] = Math.max(made, prepaid - given);
      } else {
        charged += made - (answer.madeBefore ?? 0);
        paidByChunk[chunk] = made;
      }
    };
    // Quota is spent only for new accepted work: the items refused, made before, or never sent (a
    // chunk failed) get theirs back. Every chunk sent is answered (or timed out) before the batch is,
    // so a chunk still running when another failed is counted too.
    let charged = 0;
    let credit = 0;
    const leftPrepaid: Record<number, number> = {};
    const workers = await Promise.allSettled(Array.from({ length: Math.min(batchChunksInFlight, chunks.length) }, worker));
    request.refusedItems = (request.quotaSpent?.cost ?? 0) - charged;
    request.prepaidCredit = credit;
    // Should the batch fail, what the key's next attempt finds paid for: a prepaid chunk this attempt
    // did not make (unsent, or refused by a service that did nothing) stays prepaid; a chunk answered
    // now is paid for as many units as paidByChunk says, which the retry is answered again at no
    // cost. Before 2026-12-05 a retry was charged for those again up front, and refused 429 near the
    // day's limit when the day could not hold them twice.
    chunks.forEach((firstIndex, chunk) => {
      const paid = results[chunk] === undefined ? prepaidFor(request, firstIndex) : (paidByChunk[chunk] ?? 0);
      if (paid > 0) leftPrepaid[firstIndex] ??= paid;
    });
    leavePrepaid(request, leftPrepaid);
    const failure = workers.find((outcome) => outcome.status === 'rejected');
    if (failure) throw failure.reason;
    return { results: results.flat() };
  });

  registerRoute(app, verifyCodeRoute, async (request) => {
    const view = (request.query as { view?: 'full' | 'quickstart' }).view ?? 'full';
    return deps.services.call(
      verifyCodeRpc,
      { principal: principalOf(request), client: clientOf(request), body: request.body as VerifyCodeBody, view },
      request.id,
    );
  });

  registerRoute(app, codeQrRoute, async (request, reply) => {
    const query = request.query as QrQuery;
    const image = await withRetryAfter(reply, () =>
      deps.services.call(
        renderQrRpc,
        { ...query, format: query.format ?? 'svg', owner: principalOf(request).accountId },
        request.id,
      ),
    );
    // A code's image is its owner's: no shared cache keeps it (a key may be sent in ways a cache does not see).
    reply.type(image.contentType).header('cache-control', 'private, no-store');
    return image.encoding === 'base64' ? Buffer.from(image.body, 'base64') : image.body;
  });

  registerRoute(app, reportCodeRoute, async (request, reply) => {
    const spent = await deps.reportLimits.forAccount(reply, principalOf(request).accountId);
    try {
      const report = await deps.services.call(
        reportCodeRpc,
        { principal: principalOf(request), client: clientOf(request), body: request.body as ReportCodeBody },
        request.id,
      );
      reply.status(201);
      return report;
    } catch (error) {
      // Refused (a link that does not parse, no such code): it reached no queue, and counts for nothing.
      // A timeout or a 5xx may have recorded it: it stays counted.
      if (error instanceof HallmarkError && error.status < 500) {
        await spent
          .giveBack()
          .catch((failure: unknown) => request.log.warn({ err: failure }, 'a refused report’s unit not given back'));
      }
      throw error;
    }
  });
  registerRoute(app, listCodeReportsRoute, async (request) =>
    deps.services.call(
      listCodeReportsRpc,
      { principal: principalOf(request), query: request.query as ListCodeReportsQuery },
      request.id,
    ),
  );

  for (const [route, decision] of [
    [confirmCodeReportRoute, 'confirm'],
    [dismissCodeReportRoute, 'dismiss'],
    [liftCodeReportRoute, 'lift'],
  ] as const) {
    registerRoute(app, route, async (request) =>
      deps.services.call(
        decideCodeReportRpc,
        {
          principal: principalOf(request),
          client: clientOf(request),
          reportId: (request.params as { reportId: string }).reportId,
          decision,
          body: (request.body ?? {}) as DecideReportBody,
        },
        request.id,
      ),
    );
  }
}
