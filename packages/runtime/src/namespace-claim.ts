import type { NamespaceRegister } from '@hallmark/bus';
import type { Cache } from '@hallmark/cache';
import { ConfigError } from './config.ts';
import type { Logger } from './logger.ts';

/** How long a claim outlives its last renewal: the wait before a new database may take a namespace its installation left. */
export const namespaceClaimTtlMs = 120_000;

/** A shared store the namespace is claimed in, named for the operator. */
export interface NamedRegister {
  store: 'NATS' | 'Redis';
  register: NamespaceRegister;
}

/** The claim on Redis: a key `<namespace>:installation` with a lifetime, set only when absent to claim. */
export function cacheNamespaceRegister(cache: Cache, ttlMs: number): NamespaceRegister {
  const key = 'installation';
  return {
    holder: () => cache.get(key),
    claim: (installation) => cache.setIfAbsent(key, installation, ttlMs),
    renew: (installation) => cache.set(key, installation, { ttlMs }),
  };
}

export interface NamespaceClaimOptions {
  namespace: string;
  /** This database's installation id (installation.ts). */
  installation: string;
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

/** The installation holding the namespace in one register after this one claimed it where it was free. */
async function holderAfterClaim(register: NamespaceRegister, installation: string): Promise<string | undefined> {
  const holder = await register.holder();
  if (holder !== undefined) return holder;
  if (await register.claim(installation)) return installation;
  return register.holder(); // another claimed it between the two calls
}

/**
 * Claims the namespace for this installation in every shared store before the service takes any
 * work: when another installation holds it (two installations pointed at one NATS or Redis with
 * the same HALLMARK_NAMESPACE, where each would serve the other's requests and events), rejects
 * with a ConfigError that names both, and the service does not start. Processes of one
 * installation share the claim, and each renews it every quarter of its lifetime, so it lapses
 * only when none runs. A renewal that fails (a store restarting) is logged and tried again.
 */
export async function claimNamespace(options: NamespaceClaimOptions): Promise<NamespaceClaim> {
  const ttlMs = options.ttlMs ?? namespaceClaimTtlMs;
  const { namespace, installation, log } = options;
  for (const { store, register } of options.registers) {
    const holder = await holderAfterClaim(register, installation);
    if (holder !== undefined && holder !== installation) {
      throw new ConfigError(takenMessage(namespace, store, holder, installation, ttlMs));
    }
    await register.renew(installation);
  }
  const renewAll = async () => {
    for (const { store, register } of options.registers) {
      try {
        const holder = await holderAfterClaim(register, installation);
        if (holder === installation) await register.renew(installation);
        else
          log.error(
            { store, namespace, holder, installation },
            takenMessage(namespace, store, String(holder), installation, ttlMs),
          );
      } catch (error) {
        log.warn({ err: error, store, namespace }, 'namespace claim not renewed; trying again');
      }
    }
  };
  const timer = setInterval(() => void renewAll(), ttlMs / 4);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
