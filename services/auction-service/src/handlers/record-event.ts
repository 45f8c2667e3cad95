import { HallmarkError, type Principal, type ProvenanceEventBody } from '@hallmark/contracts';
import type { ChainedRecord } from '@hallmark/provenance';
import { checkProvenanceEvent, type DomainError, decide, isRefusal, type ObjectCommand } from '../domain/object.ts';
import type { ObjectState } from '../object-history.ts';
import { changeObject, type ObjectRepositoryDeps, requireOwnedHistory } from '../object-repository.ts';
import { eventIdOf } from '../request-ids.ts';

const toHallmarkError = (refusal: DomainError) => new HallmarkError(refusal.code, refusal.message, refusal.details);

/**
 * POST /auction/provenance/events: load the object's stream, decide (domain/object.ts: the type
 * must be one a client records, types the account's compliance config lists need evidence,
 * `listed` and `withdrawn` move the status and are a CONFLICT where the state does not allow
 * them), append at the version decided on, answer.
 */
export async function recordProvenanceEvent(
  deps: ObjectRepositoryDeps & { evidenceRequiredFor: (owner: Principal) => Promise<readonly string[]> },
  owner: Principal,
  body: ProvenanceEventBody,
  requestKey?: string,
) {
  // With an Idempotency-Key the event's id follows from it and the body: a retry finds the event its
  // first attempt stored (its answer lost to a crash or a timeout) and answers it, storing nothing
  // more; the key used again with another body records that body's event.
  const eventId = requestKey ? eventIdOfRequest(requestKey, body) : undefined;
  if (eventId) {
    // Answered before the compliance config is asked: a retry needs nothing but its stored event.
    const { state } = await requireOwnedHistory(deps, owner, body.objectId);
    if (state.eventIds.has(eventId)) return recordedEvent(state, eventId);
  }
  const command: Extract<ObjectCommand, { type: 'RecordProvenanceEvent' }> = {
    type: 'RecordProvenanceEvent',
    objectId: body.objectId,
    eventType: body.eventType,
    ...(body.actorRole ? { actorRole: body.actorRole } : {}),
    ...(body.actorName ? { actorName: body.actorName } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    evidence: body.evidence ?? {},
    evidenceRequired: await deps.evidenceRequiredFor(owner),
    ...(eventId ? { eventId } : {}),
  };
  // A request no object could take is refused before (without a key) the object is looked up.
  const invalid = checkProvenanceEvent(command);
  if (invalid) throw toHallmarkError(invalid);
  const changed = await changeObject(deps, owner, body.objectId, (current) => {
    const decision = decide(command, current);
    if (isRefusal(decision)) throw toHallmarkError(decision);
    return decision;
  });
  // No event appended: the key's event was stored meanwhile (by this request's first attempt, racing it).
  return recordedEvent(changed.state, eventId ?? changed.appended[0]?.eventId);
}

/** The id of the event a keyed request records (request-ids.ts). */
export const eventIdOfRequest = (requestKey: string, body: ProvenanceEventBody): string =>
  eventIdOf('provenance-event', requestKey, body);

function recordedEvent(state: ObjectState, eventId: string | undefined) {
  const record = state.records.find((candidate) => candidate.eventId === eventId) as ChainedRecord & { eventId: string };
  return {
    eventId: record.eventId,
    objectId: state.id,
    type: record.type,
    timestamp: record.occurredAt,
    position: record.sequence,
    prevHash: record.prevHash,
    hash: record.hash,
    status: state.status,
  };
}
