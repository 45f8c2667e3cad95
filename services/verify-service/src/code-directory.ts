import { type CacheEpochs, fixedCacheEpochs, type GtinChanges, type GtinSigners } from '@hallmark/accounts';
import type { Bus } from '@hallmark/bus';
import { type CodeLookup, type Environment, findCodesRpc, HallmarkError, rpcSubject } from '@hallmark/contracts';
import { isObjectLabel } from '@hallmark/gs1';
import type { SqlExecutor } from '@hallmark/sql';
import { findProjectedCodes } from './code-projection.ts';

/** An item's codes: only its signer's (the GTIN's owner, or the operator). */
export interface ItemCodes {
  signerAccountId: string | null;
  codes: CodeLookup[];
  /**
   * True when code-service answered: it stores every code it signs before the code's 201, so its
   * list is every code of the item the signer was issued, and an empty one means none was. False
   * when the read model answered alone (it found codes, or code-service could not be asked).
   */
  fromCodeService: boolean;
}

export interface CodeDirectoryOptions {
  timeoutMs: number;
  cacheMs?: number;
  missCacheMs?: number;
  /** Items kept in memory (100,000). */
  maxItems?: number;
  /** Told when code-service could not be asked and the read model answered alone. */
  onFallback?(error: HallmarkError): void;
  /** Told when the read model could not be read (code-service is asked instead). */
  onReadModelError?(error: unknown): void;
}

/**
 * The codes of an item, kept in memory once found: a code never changes after it is made. An
 * item with no code is remembered only briefly, since it may be generated any moment. A cached
 * item costs no round trip at all (the hot path, docs/PERFORMANCE.md).
 *
 * Uncached, it asks verify-service's own read model first (`code_directory`, written by the code
 * projection from the event store) and the GTIN's signer (the accounts tables); only when the read
 * model has none of the signer's codes of the item (the projection lags a fresh code by ~100 ms)
 * is code-service asked (`findCodes`). When code-service is unavailable, the read model's answer
 * stands: verification keeps working, and only a code younger than the projection's lag is
 * unknown (verify-code.ts checks it under the signer's own keys, as a code made elsewhere; the
 * resolver finds no issued code) until code-service is back or the projection has it.
 *
 * A change of a GTIN's claims changes whose codes count: the items of the GTINs a broadcast names
 * go (`changes`), and every item once the `gtin_claims` epoch moves (a claim ended), or once
 * `gtin_claims_added` moves for an item of a GTIN nobody owned (gtin-cache.ts in @hallmark/accounts).
 */
export function createCodeDirectory(
  bus: Bus,
  store: { db: SqlExecutor; signers: GtinSigners; epochs?: CacheEpochs; changes?: GtinChanges },
  options: CodeDirectoryOptions,
) {
  const cacheMs = options.cacheMs ?? 300_000;
  const missCacheMs = options.missCacheMs ?? 2_000;
  // The codes code-service answered are kept half a second at most: it may be a replica that has not
  // yet seen a claim change this one has (the epochs are polled by each process in its own phase),
  // and kept under this replica's newer epoch for the full cacheMs, a revoked signer's codes went on
  // verifying AUTHENTIC for minutes when the change's broadcast was lost (a review of 2026-12-05).
  const codeServiceCodesMs = Math.min(cacheMs, 500);
  const maxCachedItems = options.maxItems ?? 100_000;
  // An item's codes count for its GTIN's signer: an entry from before an ownership change is gone.
  const epochs = store.epochs ?? fixedCacheEpochs;
  const changes = store.changes;
  /** `owned`: the GTIN's signer owns it (so a claim made since cannot change whose codes count). */
  const cache = new Map<
    string,
    { item: ItemCodes; until: number; epoch: number; added: number; heard: number; owned: boolean }
  >();
  /**
   * Full: what expired goes, and when that is not a tenth, the tenth remembered first. It was cleared
   * whole, so anyone scanning made-up serials (each remembered 2 s, then kept until a clear) emptied
   * every tenant's cached codes every 100,000 scans.
   */
  const forgetOldest = () => {
    const now = Date.now();
    for (const [key, entry] of cache) if (entry.until <= now) cache.delete(key);
    let excess = cache.size - Math.floor(maxCachedItems * 0.9);
    for (const key of cache.keys()) {
      if (excess-- <= 0) break;
      cache.delete(key);
    }
  };

  const askCodeService = async (environment: Environment, gtin: string, serial: string, requestId: string) => {
    const answer = await bus.request<Omit<ItemCodes, 'fromCodeService'>>(
      rpcSubject(findCodesRpc),
      { environment, gtin, serial },
      { timeoutMs: options.timeoutMs, requestId },
    );
    return answer.ok ? { ...answer.value, fromCodeService: true } : HallmarkError.fromData(answer.error);
  };

  /** The item's codes, and whether its signer owns the GTIN (false when that could not be told). */
  const lookUp = async (
    environment: Environment,
    gtin: string,
    serial: string,
    requestId: string,
  ): Promise<{ item: ItemCodes; owned: boolean }> => {
    let local: ItemCodes | undefined;
    let owner: string | undefined;
    try {
      const [signer, projected] = await Promise.all([
        store.signers.signerOf(environment, gtin),
        findProjectedCodes(store.db, environment, gtin, serial),
      ]);
      const signerAccountId = signer?.accountId ?? null;
      if (signer?.owned) owner = signer.accountId;
      local = {
        signerAccountId,
        codes: projected.filter((code) => code.accountId === signerAccountId),
        fromCodeService: false,
      };
      if (local.codes.length > 0) return { item: local, owned: owner !== undefined };
      // Code-service records no auction object (isObjectLabel): the read model's answer is the answer.
      if (isObjectLabel(gtin, serial)) return { item: local, owned: owner !== undefined };
    } catch (error) {
      // The database is away from this process: code-service may still answer.
      options.onReadModelError?.(error);
    }
    const answer = await askCodeService(environment, gtin, serial, requestId);
    if (!(answer instanceof HallmarkError))
      return { item: answer, owned: owner !== undefined && answer.signerAccountId === owner };
    if (answer.code === 'SERVICE_UNAVAILABLE' && local) {
      options.onFallback?.(answer);
      return { item: local, owned: owner !== undefined };
    }
    throw answer;
  };

  /** With `fresh`, asked again whatever is remembered (and remembered anew). */
  const findItem = async (
    environment: Environment,
    gtin: string,
    serial: string,
    requestId: string,
    { fresh = false }: { fresh?: boolean } = {},
  ): Promise<ItemCodes> => {
    const key = `${environment}\n${gtin}\n${serial}`;
    const cached = cache.get(key);
    const epoch = epochs.current('gtin_claims');
    const added = epochs.current('gtin_claims_added');
    if (
      !fresh &&
      cached &&
      cached.until > Date.now() &&
      cached.epoch >= epoch &&
      (cached.owned || cached.added >= added) &&
      (changes?.isCurrent(gtin, cached.heard) ?? true)
    ) {
      return cached.item;
    }
    const heard = changes?.stamp() ?? 0;
    const { item, owned } = await lookUp(environment, gtin, serial, requestId);
    if (cache.size >= maxCachedItems) forgetOldest();
    const keptMs = item.codes.length === 0 ? missCacheMs : item.fromCodeService ? codeServiceCodesMs : cacheMs;
    cache.set(key, { item, until: Date.now() + keptMs, epoch, added, heard, owned });
    return item;
  };
  return {
    findItem,
    /** The signer's codes of the item (usually one). */
    async find(environment: Environment, gtin: string, serial: string, requestId: string): Promise<CodeLookup[]> {
      return (await findItem(environment, gtin, serial, requestId)).codes;
    },
  };
}
export type CodeDirectory = ReturnType<typeof createCodeDirectory>;
