import type { VerificationKeys } from '@hallmark/accounts';
import type { BlobStore } from '@hallmark/blob-store';
import { verifyCodeSignatureForRequest } from '@hallmark/codes';
import { clientEventTypes, type Environment, HallmarkError, type PublicVerification } from '@hallmark/contracts';
import { assetStream, verifyChain } from '@hallmark/provenance';
import type { SignedLink } from '../domain/object.ts';
import { type ObjectState, privateOwnerLabel, type SecurityFigures, securityFigures } from '../object-history.ts';
import { loadObject, type ObjectRepositoryDeps } from '../object-repository.ts';
import type { CachedFacts, PublicFactsCache } from '../public-facts-cache.ts';
import { isValidServiceSerial } from '../service-serial.ts';
import { findObjectIdBySerial } from '../store/object-store.ts';

/**
 * The event types a buyer may see. A transfer's bookkeeping (`transfer_initiated`, `transfer_locked`,
 * `transfer_expired`) is not among them: it would show a sale under way, a sale that fell through,
 * or wrong transfer codes being tried. A completed sale shows as `sold` and `transferred`. An
 * allow-list, so a type added later stays private until it is put here.
 */
const publicEventTypes: ReadonlySet<string> = new Set(['registered', ...clientEventTypes, 'sold', 'transferred']);

export const isPublicEventType = (type: string): boolean => publicEventTypes.has(type);

/**
 * A test key's object is sandbox data: its link is a test-key code, and test-key codes expire 24
 * hours after they are made (spec, "Test keys versus live keys"; code-service's testCodeLifetimeMs).
 */
export const testLinkLifetimeMs = 24 * 3_600_000;

/** What the public answer takes from an object's history: kept per object and stream version (public-facts-cache.ts). */
export interface PublicFacts extends CachedFacts {
  environment: Environment;
  title: string;
  category: string;
  serial: string;
  registeredAt: string;
  link: SignedLink;
  /** The SHA-256 of every bound photo, each checked in the blob store on every request. */
  photos: string[];
  figures: SecurityFigures;
  /** Events a buyer may see (isPublicEventType): their count and the newest one's type. */
  publicEventCount: number;
  latestPublicEvent: string;
  /** The whole chain (bookkeeping included) recomputed. */
  chainIntact: boolean;
  /** The stored link's signature under its key (bytes only; the key's status is asked each time), once worked out. */
  signatureVerifies?: boolean;
}

export interface PublicVerifyDeps extends ObjectRepositoryDeps {
  keys: VerificationKeys;
  blobs: BlobStore;
  publicFacts: PublicFactsCache<PublicFacts>;
}

/** Reads, folds and re-hashes the object's history: the expensive part, done once per stream version. */
export function publicFactsOf(state: ObjectState): PublicFacts {
  const shown = state.records.filter((record) => isPublicEventType(record.type));
  return {
    id: state.id,
    version: state.version,
    environment: state.owner.environment,
    title: state.title,
    category: state.category,
    serial: state.serial,
    registeredAt: state.registeredAt,
    link: state.link,
    photos: [...state.photos.values()].map((photo) => photo.sha256),
    figures: securityFigures(state),
    publicEventCount: shown.length,
    latestPublicEvent: shown.at(-1)?.type ?? 'registered',
    chainIntact: verifyChain(state.records).isValid,
  };
}

/**
 * Words that claim no more than was checked: photo-bound only when every required angle has a photo
 * that is still held (docs/AUCTION.md, "Security figures"); otherwise how many of them do.
 */
function tierLabel(tier: 'basic' | 'standard' | 'enhanced', held: number, required: number): string {
  if (held === 0) return 'Basic: no reference photos held';
  if (held < required) return `${tier === 'basic' ? 'Basic' : 'Standard'}: reference photos at ${held} of ${required} angles`;
  return tier === 'enhanced' ? 'Enhanced: photo-bound at every required angle' : 'Standard: photo-bound at every required angle';
}

const notFound = (serial: string) => new HallmarkError('NOT_FOUND', `No object has the serial ${serial}.`, { serial });

/**
 * The object's public facts as of its stream's current version: from the cache when the version is
 * the one they were folded at (one indexed query), else from its whole history.
 */
async function currentFacts(deps: PublicVerifyDeps, serial: string): Promise<PublicFacts> {
  const cached = deps.publicFacts.find(serial);
  // A serial always names the same object: a cached one needs no look-up of its id.
  const id = cached?.facts.id ?? (await findObjectIdBySerial(deps.db, serial));
  if (!id) throw notFound(serial);
  const version = await deps.eventStore.streamVersion(assetStream(id));
  if (cached && !cached.due && cached.facts.version === version) return cached.facts;
  const facts = await deps.publicFacts.load(serial, id, version, async () => {
    const state = await loadObject(deps, id);
    return state ? publicFactsOf(state) : undefined;
  });
  if (!facts) throw notFound(serial);
  return facts;
}

/**
 * GET /auction/public/verify/{serial}, for anyone: the link's signature under the published key,
 * the hash chain recomputed, and every bound photo still held under its SHA-256. Only what a buyer
 * needs: never an owner, a name, an e-mail or an internal id, nor a transfer's bookkeeping. An
 * object registered with a test key answers `status: "test"` and `environment: "test"`, never
 * `authentic`.
 */
export async function publicVerify(
  deps: PublicVerifyDeps,
  serial: string,
  /** What a scanned link carried (the resolver's page): each must be what was issued. Absent: the serial alone was asked. */
  presented: { signature?: string | undefined; gtin?: string | undefined; batch?: string | undefined } = {},
): Promise<PublicVerification> {
  // A serial whose check character fails was mistyped or made up: no need to ask the database.
  if (!isValidServiceSerial(serial)) throw notFound(serial);
  const facts = await currentFacts(deps, serial);

  const key = await deps.keys.find(facts.link.kid);
  // A scanned label must carry the GTIN, category and signature that were issued, and that signature
  // must verify: a genuine label's signature under another `01` or `10` is not this object's label.
  const asIssued =
    (presented.signature === undefined || presented.signature === facts.link.signature) &&
    (presented.gtin === undefined || presented.gtin === facts.link.gtin) &&
    (presented.batch === undefined || presented.batch === facts.category);
  let signatureValid = asIssued && key !== undefined && key.status !== 'revoked';
  if (signatureValid && key) {
    facts.signatureVerifies ??= await verifyCodeSignatureForRequest(
      key.keyObject,
      { kid: facts.link.kid, gtin: facts.link.gtin, serial: facts.serial, batch: facts.category },
      facts.link.signature,
    );
    signatureValid = facts.signatureVerifies;
  }
  const figures = facts.figures;
  const held = await Promise.all(facts.photos.map((sha256) => deps.blobs.has(sha256)));
  const heldCount = held.filter(Boolean).length;
  const photoBinding = held.includes(false) ? 'invalid' : figures.photo_status.binding_status;
  const test = facts.environment === 'test';
  // Sandbox data never passes for a real object: a test object is `test`, whatever else holds.
  const authentic = !test && signatureValid && facts.chainIntact && photoBinding !== 'invalid';
  const expired = test && deps.clock().getTime() >= Date.parse(facts.registeredAt) + testLinkLifetimeMs;
  return {
    status: test ? 'test' : authentic ? 'authentic' : 'suspicious',
    ...(test ? { environment: 'test' as const } : {}),
    confidence: test ? 0 : authentic ? (photoBinding === 'valid' ? 0.99 : 0.9) : 0.3,
    object: {
      title: facts.title,
      category: facts.category,
      serial: facts.serial,
      security_tier: figures.security_tier,
      registered_at: facts.registeredAt,
    },
    cryptographic_identity: {
      signature_valid: signatureValid,
      photo_binding: photoBinding,
      tag_status: !signatureValid ? 'invalid' : expired ? 'expired' : 'verified',
      reference_photos: { bound: heldCount, required: figures.photo_status.required },
    },
    provenance: {
      event_count: facts.publicEventCount,
      chain_intact: facts.chainIntact,
      current_owner: privateOwnerLabel,
      latest_event: facts.latestPublicEvent,
    },
    security: {
      spatial_relations: figures.spatial_relations,
      entropy_bits: figures.entropy_bits,
      tier_label: tierLabel(figures.security_tier, heldCount, figures.photo_status.required),
    },
  };
}
