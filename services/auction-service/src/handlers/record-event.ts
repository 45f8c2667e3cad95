import { clientEventTypes, HallmarkError, type Principal, type ProvenanceEventBody } from '@hallmark/contracts';
import type { ChainedRecord } from '@hallmark/provenance';
import { nextStatus } from '../object-history.ts';
import { changeObject, type ObjectRepositoryDeps } from '../object-repository.ts';

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
) {
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
  const { state, appended } = await changeObject(deps, owner, body.objectId, (current) => {
    if (nextStatus(current.status, type) === undefined) {
      throw new HallmarkError('CONFLICT', `The object is ${current.status}: a ${type} event is not allowed in that state.`, {
        status: current.status,
        eventType: type,
      });
    }
    return [
      {
        type,
        data: {
          ...(body.actorRole ? { actorRole: body.actorRole } : {}),
          ...(body.actorName ? { actorName: body.actorName } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          evidence,
        },
      },
    ];
  });
  const stored = appended[0];
  const record = state.records.find((candidate) => candidate.eventId === stored?.eventId) as ChainedRecord & { eventId: string };
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
