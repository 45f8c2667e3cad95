import { type Category, categoryAngles, type ObjectStatus, type Principal } from '@hallmark/contracts';
import type { StoredEvent } from '@hallmark/event-store';
import { type ChainedRecord, chainedRecordOf } from '@hallmark/provenance';
import { evolve as evolveTransfer, type TransferEvent, type TransferFacts, transferEventTypes } from './domain/transfer.ts';

/** The private-owner label the public view shows instead of any owner (DECISIONS.md). */
export const privateOwnerLabel = 'Private Collector';

export interface BoundPhoto {
  angle: string;
  sha256: string;
  perceptualHash: string;
  width: number;
  height: number;
  anchors: number;
  entropyBits: number;
  spatialRelations: number;
}

export interface CustodyEntry {
  from: string | null;
  to: string;
  transfer_type: 'registration' | 'sale';
  timestamp: string;
}

export interface SignedLink {
  url: string;
  gtin: string;
  kid: string;
  signature: string;
}

/** An auction object as its history says it is: a fold over the events of `asset-<id>`. */
export interface ObjectState extends TransferFacts {
  id: string;
  serial: string;
  owner: Principal;
  title: string;
  category: Category;
  status: ObjectStatus;
  ownerId: string;
  registeredAt: string;
  link: SignedLink;
  photos: Map<string, BoundPhoto>;
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

/** Folds an object's stored events; undefined when the stream does not start with `registered`. */
export function foldObjectHistory(events: readonly StoredEvent[]): ObjectState | undefined {
  let state: ObjectState | undefined;
  for (const event of events) {
    const record = chainedRecordOf(event);
    if (!record) continue;
    // biome-ignore lint/suspicious/noExplicitAny: the data of events this service wrote itself, in the shapes above
    const data = event.data as any;
    if (!state) {
      if (event.type !== 'registered') return undefined;
      state = {
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
        transfers: new Map(),
        openTransferId: undefined,
      };
    } else if (event.type === 'photographed' && typeof data.sha256 === 'string') {
      state.photos.set(data.angle, data as unknown as BoundPhoto);
    } else if (event.type === 'listed') {
      state.status = 'listed';
    } else if (event.type === 'withdrawn') {
      state.status = 'consigned';
    } else if (event.type === 'sold') {
      state.status = 'sold';
    } else if (event.type === 'transferred') {
      state.custody.push({ from: data.fromOwnerId, to: data.toOwnerId, transfer_type: 'sale', timestamp: record.occurredAt });
      state.ownerId = data.toOwnerId;
    }
    // Which transfer is open, and how each ended: the transfer decider's own fold (domain/transfer.ts).
    if ((transferEventTypes as readonly string[]).includes(event.type)) {
      state = evolveTransfer(state, { type: event.type, data } as TransferEvent);
    }
    state.records.push({ ...record, eventId: event.eventId });
    state.version = event.streamVersion;
  }
  return state;
}

/** Which client-recorded event types each status allows, and where they lead (docs/AUCTION.md, "States"). */
export function nextStatus(status: ObjectStatus, eventType: string): ObjectStatus | undefined {
  if (eventType === 'listed') return status === 'consigned' ? 'listed' : undefined;
  if (eventType === 'withdrawn') return status === 'listed' ? 'consigned' : undefined;
  return status;
}
