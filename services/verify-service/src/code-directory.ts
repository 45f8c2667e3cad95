import type { Bus } from '@hallmark/bus';
import { type CodeLookup, type Environment, findCodesRpc, HallmarkError, rpcSubject } from '@hallmark/contracts';

/** An item's codes as code-service answers them: only its signer's (the GTIN's owner, or the operator). */
export interface ItemCodes {
  signerAccountId: string | null;
  codes: CodeLookup[];
}

/**
 * The codes of an item, asked of code-service once and kept: a code never changes after it is
 * made. An item with no code is remembered only briefly, since it may be generated any moment.
 * `forgetAll` runs when GTIN ownership changes (broadcast), since that changes whose codes count.
 */
export function createCodeDirectory(bus: Bus, options: { timeoutMs: number; cacheMs?: number; missCacheMs?: number }) {
  const cacheMs = options.cacheMs ?? 300_000;
  const missCacheMs = options.missCacheMs ?? 2_000;
  const cache = new Map<string, { item: ItemCodes; until: number }>();
  const findItem = async (environment: Environment, gtin: string, serial: string, requestId: string): Promise<ItemCodes> => {
    const key = `${environment}\n${gtin}\n${serial}`;
    const cached = cache.get(key);
    if (cached && cached.until > Date.now()) return cached.item;
    const answer = await bus.request<ItemCodes>(
      rpcSubject(findCodesRpc),
      { environment, gtin, serial },
      { timeoutMs: options.timeoutMs, requestId },
    );
    if (!answer.ok) throw HallmarkError.fromData(answer.error);
    if (cache.size > 100_000) cache.clear();
    cache.set(key, { item: answer.value, until: Date.now() + (answer.value.codes.length > 0 ? cacheMs : missCacheMs) });
    return answer.value;
  };
  return {
    findItem,
    /** The signer's codes of the item (usually one). */
    async find(environment: Environment, gtin: string, serial: string, requestId: string): Promise<CodeLookup[]> {
      return (await findItem(environment, gtin, serial, requestId)).codes;
    },
    forgetAll(): void {
      cache.clear();
    },
  };
}
export type CodeDirectory = ReturnType<typeof createCodeDirectory>;
