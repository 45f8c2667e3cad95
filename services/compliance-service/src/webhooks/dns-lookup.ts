import { Resolver, lookup as systemResolverLookup } from 'node:dns/promises';
import { createWorkSlots } from '@hallmark/runtime';

/** A host's addresses; `signal` says the caller stopped waiting (the lookup may then stop too). */
export type Lookup = (hostname: string, signal?: AbortSignal) => Promise<Array<{ address: string; family: number }>>;

/** What a name that does not exist fails with, in c-ares' codes. */
const noSuchName = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME', 'EBADNAME', 'ENOTIMP', 'ECONNREFUSED']);

/**
 * The delivery worker's DNS (docs/WEBHOOKS.md, "Where a delivery may go"). The system resolver
 * (`dns.lookup`, getaddrinfo) runs in libuv's thread pool and cannot be stopped: a nameserver that
 * never answers (an endpoint's owner can run one) holds a pool thread for the resolver's whole
 * retry time, and the pool has four threads, shared with the Ed25519 checks of every verification
 * in the embedded form. So names are resolved by c-ares (`Resolver`: a query on the event loop's
 * sockets, its own timeout, cancelled when the delivery stops waiting), which holds no thread.
 * Only a name DNS says does not exist is asked of the system resolver too (a name from
 * /etc/hosts, or a short name its search domains complete, as an operator's private receiver may
 * be), and at most `systemAtOnce` such lookups run at a time, so the pool always has threads free.
 */
export function createSystemLookup(
  options: {
    /** Nameservers (`host:port`), when not the system's (tests: a silent one on loopback). */
    servers?: readonly string[];
    /** c-ares' timeout per try, and its tries. */
    tryTimeoutMs?: number;
    tries?: number;
    systemAtOnce?: number;
    /** The system resolver (tests replace it). */
    systemLookup?: Lookup;
  } = {},
): Lookup {
  const systemLookup = options.systemLookup ?? ((hostname) => systemResolverLookup(hostname, { all: true, verbatim: true }));
  // The slot is held until the system lookup itself ends (it keeps its pool thread until then); a
  // delivery that stops waiting first leaves the queue without starting one.
  const systemSlots = createWorkSlots({
    running: options.systemAtOnce ?? 1,
    waiting: 1_000,
    retryAfterSeconds: 1,
    busy: 'Too many names wait for the system resolver',
  });
  return async (hostname, signal) => {
    const resolver = new Resolver({ timeout: options.tryTimeoutMs ?? 2_000, tries: options.tries ?? 2 });
    if (options.servers) resolver.setServers([...options.servers]);
    const cancel = () => resolver.cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
      const addresses = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
      ];
      if (addresses.length > 0) return addresses;
      const failures = [v4, v6].flatMap((outcome) =>
        outcome.status === 'rejected' ? [outcome.reason as NodeJS.ErrnoException] : [],
      );
      const unknownToDns = failures.every((error) => noSuchName.has(error.code ?? ''));
      if (!unknownToDns || signal?.aborted) throw failures[0] ?? new Error('no address');
      return await systemSlots.run(() => systemLookup(hostname), signal ? { signal } : {});
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
  };
}
