import { type Static, Type } from '@sinclair/typebox';
import { Pagination, RemovalByCreatorQuery, RemovedByCreator } from './common.ts';

/**
 * The GS1 Web Vocabulary link types a brand may give its links (https://gs1.org/voc/, the link
 * types of GS1's Resolver Community Edition description file). `gs1:defaultLink` is not among them:
 * a link is made the default with `default: true`; `gs1:verificationService` neither: that is
 * Hallmark's verification page, which every item has.
 */
export const gs1LinkTypes = [
  'activityIdeas',
  'allergenInfo',
  'brandHomepageClinical',
  'brandHomepagePatient',
  'careersInfo',
  'certificationInfo',
  'consumerHandlingStorageInfo',
  'disassemblyInfo',
  'epcis',
  'epil',
  'eventsInfo',
  'faqs',
  'handlingEndOfLife',
  'hasRetailers',
  'homepage',
  'ingredientsInfo',
  'instructions',
  'jws',
  'leaveReview',
  'locationInfo',
  'logisticsInfo',
  'masterData',
  'menuInfo',
  'nutritionalInfo',
  'openingHoursInfo',
  'paymentLink',
  'pip',
  'productPassport',
  'promotion',
  'purchaseSuppliesOrAccessories',
  'quickStartGuide',
  'recallStatus',
  'recipeInfo',
  'recyclingInfo',
  'registerProduct',
  'registryEntry',
  'relatedVideo',
  'repairInfo',
  'reuseInfo',
  'review',
  'safetyInfo',
  'scheduleTime',
  'serviceInfo',
  'smartLabel',
  'smpc',
  'socialMedia',
  'sorting',
  'statisticInfo',
  'support',
  'sustainabilityInfo',
  'traceability',
  'tutorial',
  'userAgreement',
  'whatsInTheBox',
] as const;

/** The namespace of GS1 link types: `gs1:pip` is `https://gs1.org/voc/pip`. */
export const gs1VocabularyNamespace = 'https://gs1.org/voc/';

/**
 * A link type as a client may write it (`gs1:pip`, `https://gs1.org/voc/pip`, also `http://`,
 * `ref.gs1.org` and `www.gs1.org`) as its CURIE, or undefined when it is not a GS1 link type.
 */
export function linkTypeCurie(value: string): string | undefined {
  const match = /^(?:gs1:|https?:\/\/(?:www\.|ref\.)?gs1\.org\/voc\/)([A-Za-z]+)$/.exec(value.trim());
  return match ? `gs1:${match[1]}` : undefined;
}

const Gtin = Type.String({ pattern: '^[0-9]{14}$', description: 'the GTIN-14 (AI 01) the link is for' });
const Lot = Type.String({ minLength: 1, maxLength: 20, description: 'only for this batch or lot (AI 10)' });
const Serial = Type.String({ minLength: 1, maxLength: 20, description: 'only for this serial (AI 21)' });
const LinkTypeField = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'a GS1 link type, as a CURIE (gs1:pip) or URI (https://gs1.org/voc/pip); stored as the CURIE',
});
const Href = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'where the link goes: an absolute http or https URL',
});
const Title = Type.String({ minLength: 1, maxLength: 200, description: 'a human-readable title' });
const MediaType = Type.String({
  minLength: 3,
  maxLength: 100,
  pattern: '^[a-zA-Z0-9!#$&^_.+-]+/[a-zA-Z0-9!#$&^_.+-]+$',
  description: 'the media type of the target, e.g. text/html',
});
const Hreflang = Type.Array(Type.String({ pattern: '^[a-zA-Z]{2}(-[a-zA-Z]{2})?$' }), {
  maxItems: 10,
  description: 'the target’s languages, e.g. ["en", "de-CH"]',
});
const IsDefault = Type.Boolean({
  description:
    'the item’s default link (gs1:defaultLink), where a scan goes without a linkType; one per item. Without one, the default is Hallmark’s verification page.',
});

/** POST /links. */
export const CreateLinkBody = Type.Object(
  {
    gtin: Gtin,
    lot: Type.Optional(Lot),
    serial: Type.Optional(Serial),
    linkType: LinkTypeField,
    href: Href,
    title: Title,
    type: MediaType,
    hreflang: Type.Optional(Hreflang),
    default: Type.Optional(IsDefault),
  },
  { additionalProperties: false },
);
export type CreateLinkBody = Static<typeof CreateLinkBody>;

/** PATCH /links/{id}: the fields to change (the item a link is for does not change). */
export const UpdateLinkBody = Type.Object(
  {
    linkType: Type.Optional(LinkTypeField),
    href: Type.Optional(Href),
    title: Type.Optional(Title),
    type: Type.Optional(MediaType),
    hreflang: Type.Optional(Hreflang),
    default: Type.Optional(IsDefault),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateLinkBody = Static<typeof UpdateLinkBody>;

export const LinkView = Type.Object({
  id: Type.String(),
  gtin: Type.String(),
  lot: Type.Union([Type.String(), Type.Null()]),
  serial: Type.Union([Type.String(), Type.Null()]),
  linkType: Type.String({ description: 'the CURIE, e.g. gs1:pip' }),
  href: Type.String(),
  title: Type.String(),
  type: Type.String(),
  hreflang: Type.Array(Type.String()),
  default: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  // Optional: a code-service before 2026-12-07 (in a rolling upgrade) answers links without them.
  createdBy: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description:
        'the id of the API key that made the link; null for links made before 2026-12-07. After a key leaks, `GET /links?createdBy=<its id>` lists the links it made',
    }),
  ),
  changedBy: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description:
        'the id of the API key that changed the link last; null if never changed (or before 2026-12-07). `GET /links?changedBy=<its id>` lists the links a leaked key pointed elsewhere',
    }),
  ),
});
export type LinkView = Static<typeof LinkView>;

export const LinkList = Type.Object({ links: Type.Array(LinkView), pagination: Pagination });
export type LinkList = Static<typeof LinkList>;

export const ListLinksQuery = Type.Object(
  {
    gtin: Type.Optional(Gtin),
    lot: Type.Optional(Lot),
    serial: Type.Optional(Serial),
    createdBy: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'only the links this API key made' })),
    changedBy: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'only the links this API key changed last' }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type ListLinksQuery = Static<typeof ListLinksQuery>;

export const LinkIdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

/** DELETE /links?createdBy=: the key whose links are removed, and how many were. */
export const RemoveLinksQuery = RemovalByCreatorQuery('links');
export const RemovedLinks = RemovedByCreator('links');

/** The links that apply to a scanned item, as the public resolver reads them. */
export const ItemLinks = Type.Object({
  links: Type.Array(LinkView, { description: 'every link of the GTIN’s owner that applies to the item, most specific first' }),
});
export type ItemLinks = Static<typeof ItemLinks>;
