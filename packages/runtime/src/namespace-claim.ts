import type { NamespaceRegister } from '@hallmark/bus';
import type { Cache } from '@hallmark/cache';
import { ConfigError } from './config.ts';
import type { Logger } from './logger.ts';

const skipped = Symbol('store unreachable');

/** How long a claim outlives its last renewal: the wait before a new database may take a namespace its installation left. */
export const namespaceClaimTtlMs = 120_000;

/** A shared store the namespace is claimed in, named for the operator. */
export interface NamedRegister {
  store: 'NATS' | 'Redis';
  register: NamespaceRegister;
}

/**
 * The claim on Redis: a key `<namespace>:installation` with a lifetime, set only when absent to
 * claim. A renewal reads the key and then writes it: a claim that lapsed (Redis unreachable for the
 * claim's whole lifetime) and was taken by another installation in the moment between the two is
 * written over; NATS's register has no such moment (each write expects the sequence it read).
 */
export function cacheNamespaceRegister(cache: Cache, ttlMs: number): NamespaceRegister {
  const key = 'installation';
  return {
    holder: () => cache.get(key),
    async hold(installation) {
      const held = await cache.get(key);
      if (held !== undefined && held !== installation) return { outcome: 'taken', holder: held };
      if (held === undefined) {
        if (await cache.setIfAbsent(key, installation, ttlMs)) return { outcome: 'claimed' };
        const now = await cache.get(key);
        if (now !== undefined && now !== installation) return { outcome: 'taken', holder: now };
      }
      await cache.set(key, installation, { ttlMs });
      return { outcome: 'renewed' };
    },
    async release(installation) {
      if ((await cache.get(key)) === installation) await cache.delete(key);
    },
  };
}

export interface NamespaceClaimOptions {
  namespace: string;
  /** This database's installation id (installation.ts). */
  installation: string;
  /** Reads the database's installation id again at each renewal: a database restored or replaced under a running process has another. */
  installationNow?: () => Promise<string>;
  registers: readonly NamedRegister[];
  log: Logger;
  /** Default: namespaceClaimTtlMs. The claim is renewed every quarter of it. */
  ttlMs?: number;
}

export interface NamespaceClaim {
  /** Stops renewing; the claim lapses a lifetime later unless another process of the installation renews it. */
  stop(): void;
}

function takenMessage(namespace: string, store: string, holder: string, installation: string, ttlMs: number): string {
  return (
    `HALLMARK_NAMESPACE "${namespace}" is in use on ${store} by another installation (installation id ${holder}; ` +
    `this database's is ${installation}). Installations that share NATS or Redis need namespaces of their own: ` +
    'requests and events of one would reach the other. Set another HALLMARK_NAMESPACE, or, if that installation ' +
    `is gone (its database replaced), start again ${Math.round(ttlMs / 1000)} s after its last process stopped, when its claim lapses.`
  );
}

/**
 * Claims the namespace for this installation in every shared store before the service takes any
 * work: when another installation holds it (two installations pointed at one NATS or Redis with
 * the same HALLMARK_NAMESPACE, where each would serve the other's requests and events), rejects
 * with a ConfigError that names both, and the service does not start. Every store is looked at
 * before any is written, and a claim this start made is given back when another store refuses
 * it, so a refused process leaves nothing that would refuse the rightful installation. Processes
 * of one installation share the claim, and each renews it every quarter of its lifetime, so it
 * lapses only when none runs. A store unreachable at start is left to the renewals, which claim it
 * once it answers. A renewal that fails (a store restarting) is logged and tried again;
 * one that finds another installation's claim (this one's lapsed meanwhile) is logged as an error.
 */
export async function claimNamespace(options: NamespaceClaimOptions): Promise<NamespaceClaim> {
  const ttlMs = options.ttlMs ?? namespaceClaimTtlMs;
  const { namespace, installation, log } = options;
  // A store that cannot be reached now does not stop the start: nobody can use it meanwhile, and the
  // renewals claim it once it answers (and log an error if another installation has it by then).
  const unreachable = new Set<string>();
  const reachable = async <T>(store: string, work: () => Promise<T>): Promise<T | typeof skipped> => {
    try {
      return await work();
    } catch (error) {
      log.warn({ err: error, store, namespace }, `${store} unreachable: HALLMARK_NAMESPACE is claimed there at the next renewal`);
      unreachable.add(store);
      return skipped;
    }
  };
  for (const { store, register } of options.registers) {
    const holder = await reachable(store, () => register.holder());
    if (holder !== skipped && holder !== undefined && holder !== installation)
      throw new ConfigError(takenMessage(namespace, store, holder, installation, ttlMs));
  }
  const claimedHere: NamespaceRegister[] = [];
  try {
    for (const { store, register } of options.registers) {
      if (unreachable.has(store)) continue;
      const held = await reachable(store, () => register.hold(installation));
      if (held === skipped) continue;
      if (held.outcome === 'taken') throw new ConfigError(takenMessage(namespace, store, held.holder, installation, ttlMs));
      if (held.outcome === 'claimed') claimedHere.push(register);
    }
  } catch (error) {
    for (const register of claimedHere) await register.release(installation).catch(() => undefined);
    throw error;
  }
  let stopped = false;
  const renewAll = async () => {
    if (options.installationNow) {
      const now = await options.installationNow().catch(() => installation); // unreadable: renew as before
      if (now !== installation && !stopped) {
        stop();
        log.error(
          { namespace, installation, now },
          `this process's database now belongs to installation ${now} (restored or replaced under it): it no longer ` +
            `claims HALLMARK_NAMESPACE "${namespace}" for ${installation}; restart it`,
        );
        return;
      }
    }
    for (const { store, register } of options.registers) {
      if (stopped) return;
      try {
        const held = await register.hold(installation);
        if (held.outcome === 'taken' && !stopped)
          log.error(
            { store, namespace, holder: held.holder, installation },
            takenMessage(namespace, store, held.holder, installation, ttlMs),
          );
      } catch (error) {
        if (!stopped) log.warn({ err: error, store, namespace }, 'namespace claim not renewed; trying again');
      }
    }
  };
  const timer = setInterval(() => void renewAll(), ttlMs / 4);
  timer.unref();
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  return { stop };
}
