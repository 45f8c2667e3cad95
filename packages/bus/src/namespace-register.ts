/**
 * Where the installation that uses a namespace (HALLMARK_NAMESPACE: NATS subjects and streams, Redis
 * keys) is written down in a store several installations may share. A claim lapses `ttlMs` after
 * its last write, so the claim of an installation whose processes are all gone frees itself.
 * The runtime claims the namespace at each service's start and refuses to start when another
 * installation holds it (packages/runtime/src/namespace-claim.ts).
 */
export interface NamespaceRegister {
  /** The installation whose claim is current, if any. */
  holder(): Promise<string | undefined>;
  /**
   * Writes `installation`'s claim afresh when it holds the namespace (`renewed`) or nobody does
   * (`claimed`); never over another installation's claim (`taken`, with its holder).
   */
  hold(installation: string): Promise<HoldOutcome>;
  /** Removes the claim if it is `installation`'s (a start that was refused elsewhere gives back what it took). */
  release(installation: string): Promise<void>;
}

export type HoldOutcome = { outcome: 'claimed' | 'renewed' } | { outcome: 'taken'; holder: string };
