import type { VerificationKeys } from '@hallmark/accounts';
import type { BlobStore } from '@hallmark/blob-store';
import { verifyCodeSignatureForRequest } from '@hallmark/codes';
import { HallmarkError, type PublicVerification } from '@hallmark/contracts';
import { verifyChain } from '@hallmark/provenance';
import { privateOwnerLabel, securityFigures } from '../object-history.ts';
import { loadObject, type ObjectRepositoryDeps } from '../object-repository.ts';
import { isValidServiceSerial } from '../service-serial.ts';
import { findObjectIdBySerial } from '../store/object-store.ts';

/**
 * Words that claim no more than was checked: photo-bound only when every required angle has a photo
 * that is still held (docs/AUCTION.md, "Security figures"); otherwise how many of them do.
 */
function tierLabel(tier: 'basic' | 'standard' | 'enhanced', held: number, required: number): string {
  if (held === 0) return 'Basic: no reference photos held';
  if (held < required) return `${tier === 'basic' ? 'Basic' : 'Standard'}: reference photos at ${held} of ${required} angles`;
  return tier === 'enhanced' ? 'Enhanced: photo-bound at every required angle' : 'Standard: photo-bound at every required angle';
}

/**
 * GET /auction/public/verify/{serial}, for anyone: the link's signature under the published key,
 * the hash chain recomputed, and every bound photo still held under its SHA-256. Only what a buyer
 * needs: never an owner, a name, an e-mail or an internal id.
 */
export async function publicVerify(
  deps: ObjectRepositoryDeps & { keys: VerificationKeys; blobs: BlobStore },
  serial: string,
  /** What a scanned link carried (the resolver's page): each must be what was issued. Absent: the serial alone was asked. */
  presented: { signature?: string | undefined; gtin?: string | undefined; batch?: string | undefined } = {},
): Promise<PublicVerification> {
  // A serial whose check character fails was mistyped or made up: no need to ask the database.
  const id = isValidServiceSerial(serial) ? await findObjectIdBySerial(deps.db, serial) : undefined;
  const state = id ? await loadObject(deps, id) : undefined;
  if (!state) throw new HallmarkError('NOT_FOUND', `No object has the serial ${serial}.`, { serial });

  const key = await deps.keys.find(state.link.kid);
  // A scanned label must carry the GTIN, category and signature that were issued, and that signature
  // must verify: a genuine label's signature under another `01` or `10` is not this object's label.
  const asIssued =
    (presented.signature === undefined || presented.signature === state.link.signature) &&
    (presented.gtin === undefined || presented.gtin === state.link.gtin) &&
    (presented.batch === undefined || presented.batch === state.category);
  const signatureValid =
    asIssued &&
    key !== undefined &&
    key.status !== 'revoked' &&
    (await verifyCodeSignatureForRequest(
      key.keyObject,
      { kid: state.link.kid, gtin: state.link.gtin, serial: state.serial, batch: state.category },
      state.link.signature,
    ));
  const chain = verifyChain(state.records);
  const figures = securityFigures(state);
  const held = await Promise.all([...state.photos.values()].map((photo) => deps.blobs.has(photo.sha256)));
  const heldCount = held.filter(Boolean).length;
  const photoBinding = held.includes(false) ? 'invalid' : figures.photo_status.binding_status;
  const authentic = signatureValid && chain.isValid && photoBinding !== 'invalid';
  return {
    status: authentic ? 'authentic' : 'suspicious',
    confidence: authentic ? (photoBinding === 'valid' ? 0.99 : 0.9) : 0.3,
    object: {
      title: state.title,
      category: state.category,
      serial: state.serial,
      security_tier: figures.security_tier,
      registered_at: state.registeredAt,
    },
    cryptographic_identity: {
      signature_valid: signatureValid,
      photo_binding: photoBinding,
      tag_status: signatureValid ? 'verified' : 'invalid',
      reference_photos: { bound: heldCount, required: figures.photo_status.required },
    },
    provenance: {
      event_count: state.records.length,
      chain_intact: chain.isValid,
      current_owner: privateOwnerLabel,
      latest_event: state.records.at(-1)?.type ?? 'registered',
    },
    security: {
      spatial_relations: figures.spatial_relations,
      entropy_bits: figures.entropy_bits,
      tier_label: tierLabel(figures.security_tier, heldCount, figures.photo_status.required),
    },
  };
}
