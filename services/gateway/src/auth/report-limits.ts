import type { Cache, CounterState } from '@hallmark/cache';
import { addressKeyOf, HallmarkError } from '@hallmark/contracts';
import type { FastifyReply } from 'fastify';
import { retryInWords } from './retry-words.ts';

const hourMs = 3_600_000;

/**
 * Counterfeit reports per hour: per account on the API (across its keys, so minting keys does not
 * help) and per client address on the resolver page's form. Reports no longer change verdicts, but
 * each lands in a brand's review queue; this keeps a script from flooding it. Fixed hourly windows;
 * a refusal is 429 RATE_LIMITED with Retry-After (the end of the hour). A spend answers how to give
 * it back, for a report then refused (a link that does not parse, a code that is not there): only
 * reports that reach a queue count, so no key spends the account's hour on requests that record nothing.
 */
export function createReportLimits(options: { cache: Cache; clock: () => Date; perAccount: number; perAddress: number }) {
  const spend = async (reply: FastifyReply, key: string, limit: number, name: string): Promise<SpentReport> => {
    const nowMs = options.clock().getTime();
    const hour = Math.floor(nowMs / hourMs);
    const resetAtMs = (hour + 1) * hourMs;
    const counter = `rl:{${key}}:h:${hour}`;
    const decision = await options.cache.consumeQuotas([{ key: counter, cost: 1, limit, resetAtMs }]);
    if (decision.allowed) return { giveBack: () => options.cache.refundQuotas([{ key: counter, cost: 1 }]) };
    const state = decision.counters[0] as CounterState;
    const retryAfterSeconds = Math.max(1, Math.ceil((state.resetAtMs - nowMs) / 1000));
    reply.header('retry-after', retryAfterSeconds);
    throw new HallmarkError(
      'RATE_LIMITED',
      `Limit reached (${name}); retry ${retryInWords(retryAfterSeconds, state.resetAtMs)}.`,
      {
        limit: name,
        retryAfterSeconds,
      },
    );
  };
  return {
    /** RATE_LIMITED (with Retry-After set on `reply`) past the account's reports this hour. */
    forAccount: (reply: FastifyReply, accountId: string) =>
      spend(reply, `report:${accountId}`, options.perAccount, 'reports-per-hour-per-account'),
    /** RATE_LIMITED (with Retry-After set on `reply`) past the address's reports this hour. */
    forAddress: (reply: FastifyReply, address: string) =>
      spend(reply, `report-ip:${addressKeyOf(address)}`, options.perAddress, 'reports-per-hour-per-address'),
  };
}
export type ReportLimits = ReturnType<typeof createReportLimits>;

/** A report counted against its hour's limit. */
export interface SpentReport {
  /** Gives the unit back: the report was refused and recorded nothing. */
  giveBack(): Promise<void>;
}
