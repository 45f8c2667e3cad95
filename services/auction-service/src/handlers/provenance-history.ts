import type { Principal, ProvenanceHistory } from '@hallmark/contracts';
import { verifyChain } from '@hallmark/provenance';
import { type ObjectRepositoryDeps, requireOwnedObject } from '../object-repository.ts';

/** GET /auction/objects/{serial}/provenance: every event, the chain of custody, and a real chain check. */
export async function provenanceHistory(
  deps: ObjectRepositoryDeps,
  owner: Principal,
  serial: string,
): Promise<ProvenanceHistory> {
  const state = await requireOwnedObject(deps, owner, serial);
  return {
    object: { serial: state.serial, title: state.title },
    chain_valid: verifyChain(state.records).isValid,
    events: state.records.map((record) => {
      const { actorRole, actorName, ...details } = record.data as { actorRole?: string; actorName?: string };
      // A name sent without a role stays in the details: the export and its hash hold it, and the
      // history must say what they say (it was dropped, an authentication by nobody).
      return actorRole
        ? { type: record.type, timestamp: record.occurredAt, actor: { type: actorRole, name: actorName ?? actorRole }, details }
        : { type: record.type, timestamp: record.occurredAt, details: record.data as Record<string, unknown> };
    }),
    chain_of_custody: state.custody,
  };
}
