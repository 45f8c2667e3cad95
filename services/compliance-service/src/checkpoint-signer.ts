import type { SigningKeyring } from '@hallmark/accounts';
import type { Principal } from '@hallmark/contracts';
import { signCheckpoint } from '@hallmark/provenance';
import type { SqlExecutor } from '@hallmark/sql';
import { createCheckpointClock } from './checkpoint-clock.ts';

export interface SignedCheckpointView {
  note: string;
  keyId: string;
  origin: string;
}

/** Key names in checkpoint signatures: `<origin prefix>/keys/<kid>`; the kid finds the key in the JWKS. */
export const checkpointKeyName = (originPrefix: string, kid: string) => `${originPrefix}/keys/${kid}`;
export const checkpointOrigin = (originPrefix: string, assetId: string) => `${originPrefix}/assets/${assetId}`;

/**
 * Signs C2SP checkpoints with the asset owner's active signing key, with the time. Callers sign only
 * the asset's current tree: a checkpoint says the tree was this size at that time. With `db`, the
 * time is never before that of a checkpoint signed already (checkpoint-clock.ts, within its lease
 * across replicas), so a clock stepped back cannot date a larger tree before a smaller one; without
 * it (tools), the clock's as read.
 */
export function createCheckpointSigner(
  keyring: SigningKeyring,
  originPrefix: string,
  options: { clock?: () => Date; db?: SqlExecutor } = {},
) {
  const clock = options.clock ?? (() => new Date());
  const signingTime = options.db ? createCheckpointClock(options.db, clock) : async () => clock();
  return async (owner: Principal, assetId: string, treeSize: number, rootHash: Buffer): Promise<SignedCheckpointView> => {
    const key = await keyring.activeSigningKey(owner);
    const origin = checkpointOrigin(originPrefix, assetId);
    const signedAt = await signingTime();
    const note = signCheckpoint(
      { origin, treeSize, rootHash, signedAt },
      { name: checkpointKeyName(originPrefix, key.kid), publicKey: key.publicKey, sign: key.sign },
    );
    return { note, keyId: key.kid, origin };
  };
}
export type CheckpointSigner = ReturnType<typeof createCheckpointSigner>;
