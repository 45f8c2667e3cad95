import { verifyConsistency } from '@hallmark/merkle';
import type { AuditReport } from './audit-export.ts';

const hex32 = /^[0-9a-f]{64}$/;

/**
 * Whether a later audited export's history extends an earlier one's (docs/COMPLIANCE.md, "Keep
 * checkpoints"): the RFC 9162 consistency proof the service gave
 * (`GET /compliance/{assetId}/merkle/consistency?from=<earlier size>&to=<later size>`, its `proof`)
 * leads from the earlier signed root to the later one. Both sizes and roots come from the reports
 * (their verified checkpoints), never from the proof's answer, whose `fromRootHash` and `toRootHash`
 * nobody signed. False when either report is not valid, they are of different assets or owners, the
 * later is smaller, or the proof does not hold.
 */
export function historyGrew(earlier: AuditReport, later: AuditReport, proof: readonly string[]): boolean {
  if (!earlier.valid || !later.valid || earlier.assetId !== later.assetId) return false;
  if (earlier.owner?.accountId !== later.owner?.accountId || earlier.owner?.environment !== later.owner?.environment)
    return false;
  const { treeSize: from, rootHash: fromRoot } = earlier;
  const { treeSize: to, rootHash: toRoot } = later;
  if (from === undefined || to === undefined || fromRoot === undefined || toRoot === undefined) return false;
  if (!Array.isArray(proof) || proof.length > 128 || !proof.every((node) => typeof node === 'string' && hex32.test(node)))
    return false;
  if (!hex32.test(fromRoot) || !hex32.test(toRoot)) return false;
  return verifyConsistency(
    from,
    to,
    Buffer.from(fromRoot, 'hex'),
    Buffer.from(toRoot, 'hex'),
    proof.map((node) => Buffer.from(node, 'hex')),
  );
}
