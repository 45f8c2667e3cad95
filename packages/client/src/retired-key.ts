/**
 * How long after its retirement a signing key may still date a checkpoint or a webhook: replicas
 * learn of a rotation within about a second (the key cache's epoch) and date checkpoints by a clock
 * that may run a second and a half ahead (checkpoint-clock.ts); a minute covers both with room.
 */
export const retirementGraceMs = 60_000;

/**
 * A published key's `hallmark_retired_at` in milliseconds: undefined when the key was not retired,
 * NaN when the member is not a time as the service writes times (toISOString).
 */
export function retiredAtMs(key: { hallmark_retired_at?: unknown }): number | undefined {
  const retiredAt = key.hallmark_retired_at;
  if (retiredAt === undefined) return undefined;
  return typeof retiredAt === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(retiredAt)
    ? Date.parse(retiredAt)
    : Number.NaN;
}
