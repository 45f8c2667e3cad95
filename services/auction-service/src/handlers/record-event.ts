import { createHash } from 'node:crypto';
import { clientEventTypes, HallmarkError, type Principal, type ProvenanceEventBody } from '@hallmark/contracts';
import type { ChainedRecord } from '@hallmark/provenance';
import { nextStatus, type ObjectState } from '../object-history.ts';
import { changeObject, type ObjectRepositoryDeps, requireOwnedHistory } from '../object-repository.ts';

const recordedElsewhere: Record<string, string> = {
  registered: 'it is recorded by POST /auction/objects/register',
  sold: 'it is recorded by a confirmed transfer',
  transferred: 'it is recorded by a confirmed transfer',
};

/**
 * POST /auction/provenance/events. The type must be one a client records (docs/AUCTION.md); types
 * the account's compliance config lists need evidence; `listed` and `withdrawn` move the status
 * and are a CONFLICT where the state does not allow them.
 */
export async function recordProvenanceEvent(
  deps: ObjectRepositoryDeps & { evidenceRequiredFor: (owner: Principal) => Promise<readonly string[]> },
  owner: Principal,
  body: ProvenanceEventBody,
  requestKey?: string,
) {
  // With an Idempotency-Key the event's id follows from it: a retry finds the event its first
  // attempt stored (its answer lost to a crash or a timeout) and answers it, storing nothing more.
  const eventId = requestKey ? eventIdOfRequest(requestKey) : undefined;
  if (eventId) {
    const { state } = await requireOwnedHistory(deps, owner, body.objectId);
    if (state.records.some((record) => record.eventId === eventId)) return recordedEvent(state, eventId);
  }
  const type = body.eventType;
  if (!(clientEventTypes as readonly string[]).includes(type)) {
    const reason = recordedElsewhere[type] ?? `it must be one of ${clientEventTypes.join(', ')}`;
    throw new HallmarkError(
      'VALIDATION_ERROR',
      `Invalid request: eventType ${JSON.stringify(type)} is not accepted here: ${reason}.`,
      {
        fields: [{ field: 'eventType', in: 'body', message: reason }],
        allowed: clientEventTypes,
      },
    );
  }
  const evidence = body.evidence ?? {};
  if (Object.keys(evidence).length === 0 && (await deps.evidenceRequiredFor(owner)).includes(type)) {
    throw new HallmarkError('VALIDATION_ERROR', `Invalid request: ${type} events need evidence (compliance config).`, {
      fields: [{ field: 'evidence', in: 'body', message: `is required for ${type} by the compliance config` }],
    });
  }
  const changed = await changeObject(deps, owner, body.objectId, (current) => {
    if (eventId && current.records.some((record) => record.eventId === eventId)) throw new AlreadyRecorded(current);
    if (nextStatus(current.status, type) === undefined) {
      throw new HallmarkError('CONFLICT', `The object is ${current.status}: a ${type} event is not allowed in that state.`, {
        status: current.status,
        eventType: type,
      });
    }
    return [
      {
        type,
        ...(eventId ? { eventId } : {}),
        data: {
          ...(body.actorRole ? { actorRole: body.actorRole } : {}),
          ...(body.actorName ? { actorName: body.actorName } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          evidence,
        },
      },
    ];
  }).catch((error: unknown) => {
    // A retry racing its first attempt, which stored the event meanwhile.
    if (error instanceof AlreadyRecorded) return { state: error.state, appended: [] };
    throw error;
  });
  return recordedEvent(changed.state, eventId ?? changed.appended[0]?.eventId);
}

/** Refusal of a decision whose event is already stored (an Idempotency-Key's retry). */
class AlreadyRecorded extends Error {
  constructor(readonly state: ObjectState) {
    super('already recorded');
  }
}

/** A UUID (version 8, RFC 9562) from the request's key: the same key always names the same event. */
export function eventIdOfRequest(requestKey: string): string {
  const hex = createHash('sha256').update(`hallmark:provenance-event:${requestKey}`).digest('hex').slice(0, 32).split('');
  hex[12] = '8';
  hex[16] = ((Number.parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  const id = hex.join('');
  return `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;
}

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
