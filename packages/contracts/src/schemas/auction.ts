import { type Static, Type } from '@sinclair/typebox';
import { BlockedCode, ConfirmedReport, RiskIndicator } from './codes.ts';
import { Pagination, printableMultilineTextPattern, printableNonBlankTextPattern } from './common.ts';

/** Categories and the photo angles each requires (the interface spec; docs/INTERFACE.md, Auction objects). */
export const categoryAngles = {
  watch: ['dial', 'movement', 'serial_engraving', 'case_back'],
  painting: ['overall', 'detail_1', 'detail_2', 'signature', 'reverse'],
  bottle: ['front_label', 'closure', 'back_label', 'fill_level'],
} as const;
export type Category = keyof typeof categoryAngles;
export const categories = Object.keys(categoryAngles) as Category[];

/** Object statuses (docs/AUCTION.md, "States"). */
export const objectStatuses = ['consigned', 'listed', 'sold'] as const;
export type ObjectStatus = (typeof objectStatuses)[number];

/** Event types a client may record with POST /auction/provenance/events; sold and transferred come from transfers. */
export const clientEventTypes = [
  'cataloged',
  'photographed',
  'authenticated',
  'condition_report',
  'exhibited',
  'listed',
  'withdrawn',
] as const;

export const ObjectIdParam = Type.Object({ objectId: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }) });
export const SerialParam = Type.Object({ serial: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }) });
export const TransferIdParam = Type.Object({
  transferId: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }),
});

/**
 * An owner as the auction house names it, shown in the chain of custody, the exports and the console:
 * not blank, and without control or text-direction characters (an U+202E would make a custody entry
 * read as another name, as a brand's display name could not).
 */
const OwnerId = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: printableNonBlankTextPattern,
  description:
    'Your identifier of an owner (a client id); default: the account. Not blank; no control or text-direction characters.',
  examples: ['client-jane'],
});

export const PhotoUploadForm = Type.Object({
  photo: Type.String({
    contentEncoding: 'binary',
    description: 'JPEG, PNG or WebP, at least 64×64 and at most 40 megapixels; not the picture bound at another angle',
  }),
  angle: Type.String({ description: 'one of the category’s angles' }),
});

export const RegisterObjectBody = Type.Object(
  {
    // Shown on the public verification and the resolver's page: a title is one printable line that
    // shows something, a description lines without control or text-direction characters.
    title: Type.String({
      minLength: 1,
      maxLength: 300,
      pattern: printableNonBlankTextPattern,
      description: 'Not blank; no control or text-direction characters.',
      examples: ['Rolex Submariner 5513, 1967'],
    }),
    category: Type.String({ minLength: 1, maxLength: 40, description: 'watch, painting or bottle' }),
    description: Type.Optional(
      Type.String({
        maxLength: 5_000,
        pattern: printableMultilineTextPattern,
        description: 'Line breaks and tabs allowed; no other control characters, no text-direction characters.',
        examples: ['Original dial and hands.\nCase polished once; box and papers.'],
      }),
    ),
    estimated_value: Type.Optional(
      Type.Object(
        {
          min: Type.Number({ minimum: 0 }),
          max: Type.Number({ minimum: 0 }),
          currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217' }),
        },
        { additionalProperties: false },
      ),
    ),
    ownerId: Type.Optional(OwnerId),
  },
  { additionalProperties: false },
);
export type RegisterObjectBody = Static<typeof RegisterObjectBody>;

export const AuctionObjectView = Type.Object({
  id: Type.String(),
  service_serial: Type.String(),
  title: Type.String(),
  category: Type.String(),
  status: Type.String(),
  security_tier: Type.String({ description: 'basic, standard or enhanced (docs/AUCTION.md)' }),
  anchor_count: Type.Integer(),
  entropy_bits: Type.Integer(),
});
export type AuctionObjectView = Static<typeof AuctionObjectView>;

export const RegisteredObject = Type.Object({
  object: AuctionObjectView,
  qr_data: Type.Object({ gs1DigitalLink: Type.String(), serial: Type.String() }),
});
export type RegisteredObject = Static<typeof RegisteredObject>;

export const PhotoStatus = Type.Object({
  count: Type.Integer(),
  required: Type.Integer(),
  binding_status: Type.String({ description: 'pending until every required angle is bound, then valid' }),
});

export const PhotoUploaded = Type.Object({
  objectId: Type.String(),
  angle: Type.String(),
  sha256: Type.String(),
  perceptualHash: Type.String({ description: '64-bit dHash, hex' }),
  width: Type.Integer(),
  height: Type.Integer(),
  replaced: Type.Boolean(),
  photo_status: PhotoStatus,
  object: AuctionObjectView,
});
export type PhotoUploaded = Static<typeof PhotoUploaded>;

export const ProvenanceEventBody = Type.Object(
  {
    objectId: Type.String({ minLength: 1, maxLength: 64, description: 'The object’s id or service_serial' }),
    eventType: Type.String({ minLength: 1, maxLength: 40 }),
    // Shown to whoever reads the history and its exports: printable and not blank, as an ownerId
    // (a bidi override or a line break in a name shows another name).
    actorRole: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, pattern: printableNonBlankTextPattern, examples: ['appraiser'] }),
    ),
    actorName: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, pattern: printableNonBlankTextPattern, examples: ['Geneva Watch Lab'] }),
    ),
    description: Type.Optional(Type.String({ maxLength: 5_000 })),
    evidence: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.Unknown())),
  },
  { additionalProperties: false },
);
export type ProvenanceEventBody = Static<typeof ProvenanceEventBody>;

export const RecordedProvenanceEvent = Type.Object({
  eventId: Type.String(),
  objectId: Type.String(),
  type: Type.String(),
  timestamp: Type.String({ format: 'date-time' }),
  position: Type.Integer({ description: 'Sequence in the object’s history, 1 for registration' }),
  prevHash: Type.Union([Type.String(), Type.Null()]),
  hash: Type.String(),
  status: Type.String({ description: 'The object’s status after the event' }),
});

export const PublicVerification = Type.Object({
  status: Type.String({
    description:
      'authentic, or suspicious when the signature, chain or photos do not hold, or the label’s owner withdrew it or confirmed a report of it; counterfeit when the owner blocked the label as counterfeit; test for an object registered with a test key (never authentic)',
  }),
  /** Not in the spec's table: present only on a test key's object (sandbox data, not a real object). */
  environment: Type.Optional(
    Type.Literal('test', {
      description: 'present only when the object was registered with a test key: sandbox data, not a real object',
    }),
  ),
  confidence: Type.Number(),
  object: Type.Object({
    title: Type.String(),
    category: Type.String(),
    serial: Type.String(),
    security_tier: Type.String(),
    registered_at: Type.String({ format: 'date-time' }),
  }),
  cryptographic_identity: Type.Object({
    signature_valid: Type.Boolean(),
    photo_binding: Type.String(),
    tag_status: Type.String(),
    /** Not in the spec's table: how many of the category's required angles have a photo bound and held. */
    reference_photos: Type.Object(
      { bound: Type.Integer(), required: Type.Integer() },
      { description: 'required angles with a photo bound (and still held), and how many the category requires' },
    ),
  }),
  provenance: Type.Object({
    event_count: Type.Integer(),
    chain_intact: Type.Boolean(),
    current_owner: Type.String(),
    latest_event: Type.String(),
  }),
  security: Type.Object({ spatial_relations: Type.Integer(), entropy_bits: Type.Integer(), tier_label: Type.String() }),
  /** Not in the spec's table: present when the label's owner has said something against it (below). */
  riskIndicators: Type.Optional(
    Type.Array(RiskIndicator, {
      description: 'KNOWN_COUNTERFEIT_PATTERN when the label is on its owner’s blocklist or the owner confirmed a report of it',
    }),
  ),
  blocked: Type.Optional(BlockedCode),
  confirmedReport: Type.Optional(ConfirmedReport),
});
export type PublicVerification = Static<typeof PublicVerification>;

/** What an object label's owner said of it in live (verify-service): a block on its blocklist, a report it confirmed. */
export const LabelStanding = Type.Object({
  blocked: Type.Optional(BlockedCode),
  confirmedReport: Type.Optional(ConfirmedReport),
});
export type LabelStanding = Static<typeof LabelStanding>;

export const ProvenanceHistory = Type.Object({
  object: Type.Object({ serial: Type.String(), title: Type.String() }),
  chain_valid: Type.Boolean(),
  events: Type.Array(
    Type.Object({
      type: Type.String(),
      timestamp: Type.String(),
      actor: Type.Optional(Type.Object({ type: Type.String(), name: Type.String() })),
      details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  ),
  chain_of_custody: Type.Array(
    Type.Object({
      from: Type.Union([Type.String(), Type.Null()]),
      to: Type.String(),
      transfer_type: Type.String(),
      timestamp: Type.String(),
    }),
  ),
});
export type ProvenanceHistory = Static<typeof ProvenanceHistory>;

export const InitiateTransferBody = Type.Object(
  {
    objectId: Type.String({ minLength: 1, maxLength: 64 }),
    fromOwnerId: OwnerId,
    toOwnerId: OwnerId,
    salePrice: Type.Number({ minimum: 0 }),
    saleCurrency: Type.String({ pattern: '^[A-Z]{3}$' }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        objectId: 'obj_4f2a9c1e7b30d5a86e12',
        fromOwnerId: 'client-jane',
        toOwnerId: 'client-omar',
        salePrice: 18500,
        saleCurrency: 'EUR',
      },
    ],
  },
);
export type InitiateTransferBody = Static<typeof InitiateTransferBody>;

export const TransferInitiated = Type.Object({
  transferId: Type.String(),
  transferCode: Type.String({ description: '6 digits, shown once; only a keyed hash is stored' }),
  expiresAt: Type.String({ format: 'date-time' }),
  status: Type.Literal('pending'),
});

export const ConfirmTransferBody = Type.Object(
  { transferCode: Type.String({ pattern: '^[0-9]{6}$', description: '6 digits' }) },
  { additionalProperties: false },
);

export const TransferCancelled = Type.Object({
  transferId: Type.String(),
  status: Type.Literal('cancelled'),
  objectId: Type.String(),
  serial: Type.String(),
  objectStatus: Type.String(),
});
export type TransferCancelled = Static<typeof TransferCancelled>;

export const TransferConfirmed = Type.Object({
  transferId: Type.String(),
  status: Type.Literal('completed'),
  objectId: Type.String(),
  serial: Type.String(),
  objectStatus: Type.String(),
  completedAt: Type.String({ format: 'date-time' }),
});

export const DashboardQuery = Type.Object(
  {
    status: Type.Optional(Type.Union(objectStatuses.map((status) => Type.Literal(status)))),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type DashboardQuery = Static<typeof DashboardQuery>;

export const DashboardList = Type.Object({
  objects: Type.Array(
    Type.Object({ serial: Type.String(), title: Type.String(), status: Type.String(), photo_status: PhotoStatus }),
  ),
  pagination: Pagination,
});
