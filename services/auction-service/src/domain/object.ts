// An auction object's own rules (registration, provenance events, photo binding), as a decider:
// no I/O, no clock, no randomness. The shell gathers the facts (the object's id, serial and signed
// link; the compliance config's evidence list; the photo's decoded analysis; an Idempotency-Key's
// event id) and puts them in the command. Transfers are decided in ./transfer.ts; `evolve` here
// folds both kinds of event, so one state serves every decision on the object. docs/AUCTION.md.

import {
  type Category,
  type DomainError as ContractsDomainError,
  categories,
  categoryAngles,
  clientEventTypes,
  isDomainError,
  type ObjectStatus,
  type RegisterObjectBody,
  refuse,
} from '@hallmark/contracts';
import type { PhotoCheck } from '../photo-analysis.ts';
import { findSameImage, sameImageMaxDistance } from '../photo-similarity.ts';
import {
  evolve as evolveTransfer,
  initialTransferFacts,
  isPrivateTransferEvent,
  type DomainError as TransferDomainError,
  type TransferEvent,
  type TransferFacts,
  transferEventTypes,
} from './transfer.ts';

/** What the object's decisions refuse with: the transfer's refusals, and a photo the owner has no room for. */
export type DomainError = TransferDomainError | ContractsDomainError<'PAYLOAD_TOO_LARGE'>;

export type BoundPhoto = {
  angle: string;
  sha256: string;
  perceptualHash: string;
  width: number;
  height: number;
  anchors: number;
  entropyBits: number;
  spatialRelations: number;
};

export interface SignedLink {
  url: string;
  gtin: string;
  kid: string;
  signature: string;
}

export type EstimatedValue = NonNullable<RegisterObjectBody['estimated_value']>;
export type ClientEventType = (typeof clientEventTypes)[number];

export type RegisteredData = {
  serviceSerial: string;
  title: string;
  category: Category;
  description?: string;
  estimatedValue?: EstimatedValue;
  ownerId: string;
  link: SignedLink;
};

/** What a client records: a note on the object (`listed` and `withdrawn` also move its status). */
export type NoteData = {
  actorRole?: string;
  actorName?: string;
  description?: string;
  evidence: Record<string, unknown>;
};

export type PhotoBoundData = BoundPhoto & {
  size: number;
  format: string;
  replaced: boolean;
  replacedSha256?: string;
};

/**
 * The object's own events. `photographed` is both a client's note and a photo binding (the stored
 * type is the same); a binding is told apart by its `sha256` (`isPhotoBinding`). `eventId` is the
 * stream's id of the event: set by the shell for a stored event, or chosen by the decider when an
 * Idempotency-Key names it.
 */
export type ObjectEvent =
  | { type: 'registered'; eventId?: string; data: RegisteredData }
  | { type: 'photographed'; eventId?: string; data: PhotoBoundData }
  | { type: ClientEventType; eventId?: string; data: NoteData };

/** Every event of the stream `asset-<id>`. */
export type AuctionEvent = ObjectEvent | (TransferEvent & { eventId?: string });

export const isPhotoBinding = (event: AuctionEvent): event is Extract<ObjectEvent, { data: PhotoBoundData }> =>
  event.type === 'photographed' && typeof (event.data as Partial<PhotoBoundData>).sha256 === 'string';

/**
 * How many events an object's history may hold before client-recorded events and photo bindings
 * are refused (409 CONFLICT, docs/AUCTION.md, "Provenance events and states"). Every request on
 * the object reads and folds its whole history, and the public verification (no key, 10 a second
 * per address) recomputes its chain, so the history's length is what one request costs. On the
 * development machine: 1,000 events 35–50 ms, 10–15 of them on the event loop (fold and chain),
 * within docs/PERFORMANCE.md's 20 ms stall; 10,000 events 0.4–0.8 s, 130–400 ms on the loop. A
 * real object's provenance is tens to a few hundred events (a sale adds three).
 */
export const maxObjectEvents = 1_000;

/**
 * Ids of the events stored so far, as a persistent list (newest first): adding one shares the ids
 * before it, so `evolve` copies nothing per event (a copied Set made folding a history quadratic:
 * 10,000 events took seconds) and no state a caller holds ever changes. `has` walks the list; the
 * decider asks it once a command.
 */
export interface EventIds {
  has(eventId: string): boolean;
  /** These ids and one more; this list is left as it was. */
  with(eventId: string): EventIds;
}

interface EventIdNode {
  readonly eventId: string;
  readonly rest: EventIdNode | undefined;
}

const eventIdsFrom = (head: EventIdNode | undefined): EventIds => ({
  has(eventId) {
    for (let node = head; node; node = node.rest) if (node.eventId === eventId) return true;
    return false;
  },
  with: (eventId) => eventIdsFrom({ eventId, rest: head }),
});

export const noEventIds: EventIds = eventIdsFrom(undefined);

/** What the object's decisions read: the transfer facts plus the object's own. */
export interface ObjectFacts extends TransferFacts {
  /** False until the `registered` event: no other command applies before it. */
  registered: boolean;
  category: Category | undefined;
  status: ObjectStatus;
  photos: ReadonlyMap<string, BoundPhoto>;
  /** Ids of the events stored so far (an Idempotency-Key's retry finds its event here). */
  eventIds: EventIds;
  /** How many events the object's stream holds (a wrong transfer code's private event is not one). */
  eventCount: number;
  /** Bytes of every photo ever bound to the object, replaced ones included (their blobs are kept). */
  photoBytes: number;
}

export const initialObjectFacts = (objectId: string): ObjectFacts => ({
  ...initialTransferFacts(objectId, ''),
  registered: false,
  category: undefined,
  status: 'consigned',
  photos: new Map(),
  eventIds: noEventIds,
  eventCount: 0,
  photoBytes: 0,
});

export type ObjectCommand =
  | {
      type: 'RegisterObject';
      /** Facts from the shell: the new id, serial and the link signed for them. */
      objectId: string;
      serial: string;
      link: SignedLink;
      title: string;
      /** As the client sent it: checked here. */
      category: string;
      description?: string;
      estimatedValue?: EstimatedValue;
      ownerId: string;
    }
  | {
      type: 'RecordProvenanceEvent';
      /** The id or serial the client named (for the refusal's details). */
      objectId: string;
      eventType: string;
      actorRole?: string;
      actorName?: string;
      description?: string;
      evidence: Record<string, unknown>;
      /** Fact from the compliance config: event types that need evidence. */
      evidenceRequired: readonly string[];
      /** Fact from an Idempotency-Key: the id the event gets; a retry finds it stored. */
      eventId?: string;
    }
  | {
      type: 'BindPhoto';
      objectId: string;
      angle: string;
      sha256: string;
      size: number;
      /** Fact from the shell: the decoded photo's figures and perceptual hash, or why it is refused. */
      analysis: PhotoCheck;
      /** Fact from the shell: the photo bytes the owner's objects hold, and the most they may. */
      storage: PhotoStorage;
      /** Fact from an Idempotency-Key: the id the binding's event gets; a retry finds it stored. */
      eventId?: string;
    };

/** The photo bytes an account holds in one environment (every object's `photoBytes`) and its limit. */
export interface PhotoStorage {
  usedBytes: number;
  limitBytes: number;
}

export const isRefusal = (decision: readonly ObjectEvent[] | DomainError): decision is DomainError => isDomainError(decision);

const notFound = (idOrSerial: string) => refuse('NOT_FOUND', `Object ${idOrSerial} was not found.`, { objectId: idOrSerial });

/** An object whose history is full takes no more client events or photos (maxObjectEvents); transfers still go through, up to maxEventsToStartTransfer. */
function checkRoom(state: ObjectFacts): DomainError | undefined {
  if (state.eventCount < maxObjectEvents) return undefined;
  return refuse(
    'CONFLICT',
    `The object's history holds ${state.eventCount} events, the most an object takes: ` +
      `no more provenance events or photos can be recorded for it (a limit of ${maxObjectEvents}; transfers still go through).`,
    { limit: maxObjectEvents, eventCount: state.eventCount },
  );
}

/**
 * A photo fits when the owner's photos (every one bound, replaced ones included: their blobs are
 * kept) and it stay within the owner's limit, so one tenant cannot fill the blob store everyone
 * shares. The shell checks it before decoding the photo, the decider again with the rest.
 */
export function checkPhotoStorage(storage: PhotoStorage, size: number): DomainError | undefined {
  if (storage.usedBytes + size <= storage.limitBytes) return undefined;
  return refuse(
    'PAYLOAD_TOO_LARGE',
    `This account's photos take ${storage.usedBytes} of the ${storage.limitBytes} bytes it may store in this environment: ` +
      `a photo of ${size} bytes does not fit.`,
    { limit: 'photo-storage', usedBytes: storage.usedBytes, limitBytes: storage.limitBytes, size },
  );
}

/** A Map: a client's eventType of `constructor` or `__proto__` must find nothing (an object found Object's members). */
const recordedElsewhere: ReadonlyMap<string, string> = new Map([
  ['registered', 'it is recorded by POST /auction/objects/register'],
  ['sold', 'it is recorded by a confirmed transfer'],
  ['transferred', 'it is recorded by a confirmed transfer'],
  ['transfer_cancelled', 'it is recorded by POST /auction/transfers/{transferId}/cancel'],
]);

/** Which client-recorded event types each status allows, and where they lead (docs/AUCTION.md, "States"). */
export function nextStatus(status: ObjectStatus, eventType: string): ObjectStatus | undefined {
  if (eventType === 'listed') return status === 'consigned' ? 'listed' : undefined;
  if (eventType === 'withdrawn') return status === 'listed' ? 'consigned' : undefined;
  return status;
}

/**
 * The rules of a provenance event that need no state: a type a client records, and evidence where
 * the compliance config asks for it. The shell may check them before it loads the object.
 */
export function checkProvenanceEvent(
  command: Extract<ObjectCommand, { type: 'RecordProvenanceEvent' }>,
): DomainError | undefined {
  const type = command.eventType;
  if (!(clientEventTypes as readonly string[]).includes(type)) {
    const reason = recordedElsewhere.get(type) ?? `it must be one of ${clientEventTypes.join(', ')}`;
    return refuse('VALIDATION_ERROR', `Invalid request: eventType ${JSON.stringify(type)} is not accepted here: ${reason}.`, {
      fields: [{ field: 'eventType', in: 'body', message: reason }],
      allowed: clientEventTypes,
    });
  }
  if (Object.keys(command.evidence).length === 0 && command.evidenceRequired.includes(type)) {
    return refuse('VALIDATION_ERROR', `Invalid request: ${type} events need evidence (compliance config).`, {
      fields: [{ field: 'evidence', in: 'body', message: `is required for ${type} by the compliance config` }],
    });
  }
  const evidenceBytes = Buffer.byteLength(JSON.stringify(command.evidence));
  if (evidenceBytes > maxEvidenceBytes) {
    return refuse(
      'VALIDATION_ERROR',
      `Invalid request: evidence is ${evidenceBytes} bytes as JSON; at most ${maxEvidenceBytes}.`,
      {
        fields: [{ field: 'evidence', in: 'body', message: `must be at most ${maxEvidenceBytes} bytes as JSON (UTF-8)` }],
      },
    );
  }
  return undefined;
}

/**
 * An event's evidence, as JSON in UTF-8 bytes: references to documents (certificates, reports,
 * lot numbers), never the documents. Every public verification and history reads the whole
 * history, so with maxObjectEvents this bounds what one object costs to read (~16 MB at most).
 */
export const maxEvidenceBytes = 16_384;

/** Whether a category takes an angle: a refusal naming the category's angles, or undefined. */
export function checkAngle(category: Category, angle: string): DomainError | undefined {
  const angles = categoryAngles[category] as readonly string[];
  if (angles.includes(angle)) return undefined;
  return refuse('VALIDATION_ERROR', `Invalid request: a ${category} takes the angles ${angles.join(', ')}.`, {
    fields: [{ field: 'angle', in: 'body', message: `must be one of ${angles.join(', ')}` }],
    allowed: angles,
  });
}

/** Decides a command on the object's folded state (undefined: no such object): events, or a refusal. */
export function decide(command: ObjectCommand, state: ObjectFacts | undefined): ObjectEvent[] | DomainError {
  const registered = state?.registered ? state : undefined;
  switch (command.type) {
    case 'RegisterObject': {
      if (registered) return refuse('CONFLICT', `Object ${command.objectId} exists already.`, { objectId: command.objectId });
      if (!(categories as string[]).includes(command.category)) {
        return refuse('VALIDATION_ERROR', `Invalid request: category must be one of ${categories.join(', ')}.`, {
          fields: [{ field: 'category', in: 'body', message: `must be one of ${categories.join(', ')}` }],
          allowed: categories,
        });
      }
      if (command.estimatedValue && command.estimatedValue.min > command.estimatedValue.max) {
        return refuse('VALIDATION_ERROR', 'Invalid request: estimated_value.min is above max.', {
          fields: [{ field: 'estimated_value.min', in: 'body', message: 'must not exceed max' }],
        });
      }
      return [
        {
          type: 'registered',
          data: {
            serviceSerial: command.serial,
            title: command.title,
            category: command.category as Category,
            ...(command.description !== undefined ? { description: command.description } : {}),
            ...(command.estimatedValue ? { estimatedValue: command.estimatedValue } : {}),
            ownerId: command.ownerId,
            link: command.link,
          },
        },
      ];
    }
    case 'RecordProvenanceEvent': {
      const { eventId } = command;
      if (eventId !== undefined) {
        // A retry of a stored event is answered with it, whatever the rules say now.
        if (!registered) return notFound(command.objectId);
        if (registered.eventIds.has(eventId)) return [];
      }
      const invalid = checkProvenanceEvent(command);
      if (invalid) return invalid;
      if (!registered) return notFound(command.objectId);
      const type = command.eventType as ClientEventType;
      if (nextStatus(registered.status, type) === undefined) {
        return refuse('CONFLICT', `The object is ${registered.status}: a ${type} event is not allowed in that state.`, {
          status: registered.status,
          eventType: type,
        });
      }
      const full = checkRoom(registered);
      if (full) return full;
      return [
        {
          type,
          ...(eventId !== undefined ? { eventId } : {}),
          data: {
            ...(command.actorRole ? { actorRole: command.actorRole } : {}),
            ...(command.actorName ? { actorName: command.actorName } : {}),
            ...(command.description !== undefined ? { description: command.description } : {}),
            evidence: command.evidence,
          },
        },
      ];
    }
    case 'BindPhoto': {
      if (!registered?.category) return notFound(command.objectId);
      // A retry of a stored binding is answered with it, whatever the rules say now.
      if (command.eventId !== undefined && registered.eventIds.has(command.eventId)) return [];
      const wrongAngle = checkAngle(registered.category, command.angle);
      if (wrongAngle) return wrongAngle;
      const { analysis } = command;
      if (!analysis.ok) {
        return refuse('VALIDATION_ERROR', `Invalid request: ${analysis.problem}`, {
          fields: [{ field: 'photo', in: 'body', message: analysis.problem }],
        });
      }
      const same = findSameImage(analysis.analysis.perceptualHash, command.angle, registered.photos);
      if (same) {
        return refuse(
          'CONFLICT',
          `This photo is the picture bound at ${same.angle} (perceptual hashes ${same.distance} of 64 bits apart; ` +
            `${sameImageMaxDistance} or fewer is the same picture): each angle needs a photo of its own.`,
          { angle: command.angle, similarTo: same.angle, distance: same.distance, threshold: sameImageMaxDistance },
        );
      }
      const full = checkRoom(registered) ?? checkPhotoStorage(command.storage, command.size);
      if (full) return full;
      const previous = registered.photos.get(command.angle);
      return [
        {
          type: 'photographed',
          ...(command.eventId !== undefined ? { eventId: command.eventId } : {}),
          data: {
            angle: command.angle,
            sha256: command.sha256,
            size: command.size,
            ...analysis.analysis,
            replaced: previous !== undefined,
            ...(previous ? { replacedSha256: previous.sha256 } : {}),
          },
        },
      ];
    }
    default:
      return command satisfies never;
  }
}

const isTransferEvent = (event: AuctionEvent): event is TransferEvent & { eventId?: string } =>
  (transferEventTypes as readonly string[]).includes(event.type);

/**
 * Applies one event of the object's stream (a new state; the old one is left as it was). Linear
 * over a history: nothing that grows with the history is copied (eventIds shares its list).
 */
export function evolve<S extends ObjectFacts>(state: S, event: AuctionEvent): S {
  const next = applyEvent(state, event);
  const stored = !(isTransferEvent(event) && isPrivateTransferEvent(event));
  return {
    ...next,
    eventCount: next.eventCount + (stored ? 1 : 0),
    ...(event.eventId !== undefined ? { eventIds: next.eventIds.with(event.eventId) } : {}),
  };
}

function applyEvent<S extends ObjectFacts>(state: S, event: AuctionEvent): S {
  if (isTransferEvent(event)) {
    const moved = evolveTransfer(state, event);
    return event.type === 'sold' ? { ...moved, status: 'sold' } : moved;
  }
  if (event.type === 'registered') {
    const { category, ownerId } = event.data as RegisteredData;
    return { ...state, registered: true, category, ownerId, status: 'consigned' };
  }
  if (isPhotoBinding(event)) {
    const photos = new Map(state.photos);
    photos.set(event.data.angle, event.data);
    return { ...state, photos, photoBytes: state.photoBytes + event.data.size };
  }
  // A client's note: `listed` and `withdrawn` move the status, the rest leave it.
  const status = nextStatus(state.status, event.type);
  return status === undefined || status === state.status ? state : { ...state, status };
}
