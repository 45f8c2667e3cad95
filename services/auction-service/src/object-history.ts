import { type Category, categoryAngles, type ObjectStatus, type Principal } from '@hallmark/contracts';
import type { StoredEvent } from '@hallmark/event-store';
import { type ChainedRecord, chainedRecordOf } from '@hallmark/provenance';
import {
  type AuctionEvent,
  type BoundPhoto,
  evolve,
  initialObjectFacts,
  type ObjectFacts,
  type SignedLink,
} from './domain/object.ts';

export type { BoundPhoto, SignedLink } from './domain/object.ts';
export { nextStatus } from './domain/object.ts';

/** The private-owner label the public view shows instead of any owner (docs/INTERFACE.md). */
export const privateOwnerLabel = 'Private Collector';

export interface CustodyEntry {
  from: string | null;
  to: string;
  transfer_type: 'registration' | 'sale';
  timestamp: string;
}

/** An auction object as its history says it is: a fold over the events of `asset-<id>`. */
export interface ObjectState extends ObjectFacts {
  id: string;
  serial: string;
  owner: Principal;
  title: string;
  category: Category;
  status: ObjectStatus;
  ownerId: string;
  registeredAt: string;
  link: SignedLink;
  photos: ReadonlyMap<string, BoundPhoto>;
  custody: CustodyEntry[];
  records: Array<ChainedRecord & { eventId: string }>;
  /** The stream's version: append the next change at it. */
  version: number;
}

export interface SecurityFigures {
  anchor_count: number;
  entropy_bits: number;
  spatial_relations: number;
  security_tier: 'basic' | 'standard' | 'enhanced';
  photo_status: { count: number; required: number; binding_status: 'pending' | 'valid' };
}

/** Bits of anchor layout from which an object with every angle bound counts as enhanced. */
export const enhancedEntropyBits = 128;

/** docs/AUCTION.md, "Security figures": sums over the photo bound at each required angle. */
export function securityFigures(state: Pick<ObjectState, 'category' | 'photos'>): SecurityFigures {
  const required = categoryAngles[state.category] as readonly string[];
  const bound = required.map((angle) => state.photos.get(angle)).filter((photo) => photo !== undefined);
  const anchors = bound.reduce((sum, photo) => sum + photo.anchors, 0);
  const entropy = bound.reduce((sum, photo) => sum + photo.entropyBits, 0);
  const relations = bound.reduce((sum, photo) => sum + photo.spatialRelations, 0);
  const complete = bound.length === required.length;
  return {
    anchor_count: anchors,
    entropy_bits: entropy,
    spatial_relations: relations,
    security_tier: complete && entropy >= enhancedEntropyBits ? 'enhanced' : bound.length > 0 ? 'standard' : 'basic',
    photo_status: { count: bound.length, required: required.length, binding_status: complete ? 'valid' : 'pending' },
  };
}

/**
 * Folds an object's stored events; undefined when the stream does not start with `registered`.
 * The rules' state comes from the decider's `evolve` (domain/object.ts); what only the shell shows
 * (serial, title, link, custody with its times, the chained records, the stream version) is added here.
 */
export function foldObjectHistory(events: readonly StoredEvent[]): ObjectState | undefined {
  let state: ObjectState | undefined;
  for (const event of events) {
    const record = chainedRecordOf(event);
    if (!record) continue;
    // biome-ignore lint/suspicious/noExplicitAny: the data of events this service wrote itself, in the shapes of domain/object.ts
    const data = event.data as any;
    if (!state) {
      if (event.type !== 'registered') return undefined;
      state = {
        ...initialObjectFacts(record.assetId),
        id: record.assetId,
        serial: data.serviceSerial,
        owner: { accountId: record.accountId, environment: record.environment },
        title: data.title,
        category: data.category,
        status: 'consigned',
        ownerId: data.ownerId,
        registeredAt: record.occurredAt,
        link: data.link,
        photos: new Map(),
        custody: [{ from: null, to: data.ownerId, transfer_type: 'registration', timestamp: record.occurredAt }],
        records: [],
        version: 0,
      };
    } else if (event.type === 'transferred') {
      state.custody.push({ from: data.fromOwnerId, to: data.toOwnerId, transfer_type: 'sale', timestamp: record.occurredAt });
    }
    state = evolve(state, { type: event.type, data, eventId: event.eventId } as AuctionEvent);
    state.records.push({ ...record, eventId: event.eventId });
    state.version = event.streamVersion;
  }
  return state;
}
