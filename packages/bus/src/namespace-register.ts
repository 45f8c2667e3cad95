/**
 * Where the installation that uses a namespace (HALLMARK_NAMESPACE: NATS subjects and streams, Redis
 * keys) is written down in a store several installations may share. A claim lapses `ttlMs` after
 * its last renewal, so the claim of an installation whose processes are all gone frees itself.
 * The runtime claims the namespace at each service's start and refuses to start when another
 * installation holds it (packages/runtime/src/namespace-claim.ts).
 */
export interface NamespaceRegister {
  /** The installation whose claim is current, if any. */
  holder(): Promise<string | undefined>;
  /** Claims the namespace for `installation` when no claim is current; false when one is (anyone's). */
  claim(installation: string): Promise<boolean>;
  /** Writes the claim again, from now: the caller checked that it holds it. */
  renew(installation: string): Promise<void>;
}
