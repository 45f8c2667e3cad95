import type { Bus } from '@hallmark/bus';
import { type CodeLookup, type Environment, findCodesRpc, HallmarkError, rpcSubject } from '@hallmark/contracts';

/**
 * The codes of an item, asked of code-service once and kept: a code never changes after it is
 * made. An item with no code is remembered only briefly, since it may be generated any moment.
 */
export function createCodeDirectory(bus: Bus, options: { timeoutMs: number; cacheMs?: number; missCacheMs?: number }) {
  const cacheMs = options.cacheMs ?? 300_000;
  const missCacheMs = options.missCacheMs ?? 2_000;
  const cache = new Map<string, { codes: CodeLookup[]; until: number }>();
  return {
    async find(environment: Environment, gtin: string, serial: string, requestId: string): Promise<CodeLookup[]> {
      const key = `${environment}\n${gtin}\n${serial}`;
      const cached = cache.get(key);
      if (cached && cached.until > Date.now()) return cached.codes;
      const answer = await bus.request<{ codes: CodeLookup[] }>(
        rpcSubject(findCodesRpc),
        { environment, gtin, serial },
        { timeoutMs: options.timeoutMs, requestId },
      );
      if (!answer.ok) throw HallmarkError.fromData(answer.error);
      if (cache.size > 100_000) cache.clear();
      cache.set(key, { codes: answer.value.codes, until: Date.now() + (answer.value.codes.length > 0 ? cacheMs : missCacheMs) });
      return answer.value.codes;
    },
  };
}
export type CodeDirectory = ReturnType<typeof createCodeDirectory>;
