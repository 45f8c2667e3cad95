import type { BlobStore } from '@hallmark/blob-store';
import { HallmarkError, type PhotoUploaded, type Principal } from '@hallmark/contracts';
import type { StoredEvent } from '@hallmark/event-store';
import type { WorkSlots } from '@hallmark/runtime';
import {
  checkAngle,
  checkPhotoStorage,
  type DomainError,
  decide,
  isPhotoBinding,
  isRefusal,
  type PhotoBoundData,
} from '../domain/object.ts';
import type { ObjectState } from '../object-history.ts';
import { securityFigures } from '../object-history.ts';
import { changeObject, type ObjectRepositoryDeps } from '../object-repository.ts';
import { analysePhoto, type PhotoCheck } from '../photo-analysis.ts';
import { eventIdOf } from '../request-ids.ts';
import { isPhotoBlob, markPhotoBlobBound, recordPhotoBlob, releasePhotoBlob } from '../store/photo-blobs.ts';
import { photoStorageOf } from '../store/photo-storage.ts';
import { objectView } from './register-object.ts';

const toHallmarkError = (refusal: DomainError) => new HallmarkError(refusal.code, refusal.message, refusal.details);

export type BindPhotoDeps = ObjectRepositoryDeps & {
  blobs: BlobStore;
  decoding: WorkSlots;
  /** The photo bytes an account may store in each environment (HALLMARK_PHOTO_BYTES_PER_ACCOUNT). */
  photoBytesPerAccount: number;
};

/**
 * POST /auction/objects/{objectId}/photos, after the gateway stored the bytes: check the angle
 * against the category, decode the image (a few at a time), refuse the picture already bound at
 * another angle, and record a `photographed` event with its SHA-256, perceptual hash and anchors.
 * A new photo at an angle replaces the earlier one (the event says so), and counts toward the
 * owner's photo storage as the earlier one still does (a full account's upload is 413). Whatever refuses the
 * upload, its blob is removed again unless a photo of any object has the same SHA-256.
 */
export async function bindPhoto(deps: BindPhotoDeps, owner: Principal, request: PhotoRequest): Promise<PhotoUploaded> {
  const bytes = await deps.blobs.get(request.sha256);
  if (!bytes)
    throw new HallmarkError('VALIDATION_ERROR', 'Invalid request: the uploaded photo was not found.', { sha256: request.sha256 });
  let bound: PhotoUploaded;
  const record = { madeHere: false };
  try {
    bound = await bind(deps, owner, request, bytes, record);
  } catch (error) {
    // The refusal is the answer; a blob that could not be removed is only storage. The record this
    // upload made goes first, unless a binding marked it (where bindings mark theirs in their
    // event's transaction: elsewhere, KurrentDB, records stay as they did).
    await (async () => {
      if (record.madeHere && deps.eventStore.atomicReadModels) await releasePhotoBlob(deps.db, request.sha256);
      await forgetUnboundBlob(deps, request.sha256, bytes);
    })().catch(() => undefined);
    throw error;
  }
  // A refused upload of the same bytes may have removed the blob while this one was deciding: put it back.
  if (!(await deps.blobs.has(request.sha256))) await deps.blobs.put(bytes);
  return bound;
}

/** An upload to bind; `requestKey`: its Idempotency-Key as the gateway scopes it. */
type PhotoRequest = { objectId: string; angle: string; sha256: string; requestKey?: string | undefined };

/**
 * The answer of a binding stored by an earlier attempt of the same keyed upload (its answer lost to
 * a crash or a timeout), from its event in the history changeObject read and the object as it is
 * now; undefined when there is none.
 */
function storedBinding(state: ObjectState, history: readonly StoredEvent[], eventId: string): PhotoUploaded | undefined {
  const event = history.find((candidate) => candidate.eventId === eventId);
  if (!event) return undefined;
  const data = event.data as unknown as PhotoBoundData;
  return photoUploaded(state, data.angle, data);
}

function photoUploaded(state: ObjectState, angle: string, bound: PhotoBoundData): PhotoUploaded {
  return {
    objectId: state.id,
    angle,
    sha256: bound.sha256,
    perceptualHash: bound.perceptualHash,
    width: bound.width,
    height: bound.height,
    replaced: bound.replaced,
    photo_status: securityFigures(state).photo_status,
    object: objectView(state),
  };
}

async function bind(
  deps: BindPhotoDeps,
  owner: Principal,
  request: PhotoRequest,
  bytes: Buffer,
  record: { madeHere: boolean },
): Promise<PhotoUploaded> {
  // With an Idempotency-Key the binding's event id follows from it and the upload: a retry after a
  // crash finds the binding its first attempt stored and answers it, binding nothing again.
  const { requestKey, ...upload } = request;
  const eventId = requestKey ? eventIdOf('photo', requestKey, upload) : undefined;
  let analysis: PhotoCheck | undefined;
  let bound: PhotoBoundData | undefined;
  const { state, appended, history } = await changeObject(
    deps,
    owner,
    request.objectId,
    async (current) => {
      // A retry whose binding is stored records nothing: answered below, with nothing checked or decoded.
      if (eventId && current.eventIds.has(eventId)) return [];
      // The angle and the owner's room first: either refuses without decoding the photo.
      const wrongAngle = checkAngle(current.category, request.angle);
      if (wrongAngle) throw toHallmarkError(wrongAngle);
      const storage = await photoStorageOf(deps.db, owner, deps.photoBytesPerAccount);
      const full = checkPhotoStorage(storage, bytes.length);
      if (full) throw toHallmarkError(full);
      analysis ??= await deps.decoding.run(() => analysePhoto(bytes));
      const decision = decide(
        {
          type: 'BindPhoto',
          objectId: request.objectId,
          angle: request.angle,
          sha256: request.sha256,
          size: bytes.length,
          analysis,
          storage,
          ...(eventId ? { eventId } : {}),
        },
        current,
      );
      if (isRefusal(decision)) throw toHallmarkError(decision);
      const [event] = decision;
      bound = event && isPhotoBinding(event) ? event.data : undefined;
      // Before the event: a crash in between leaves a record that only keeps the blob, never a photo
      // without its blob; a refusal from here on (a race lost, then refused) releases it.
      if (await recordPhotoBlob(deps.db, request.sha256, deps.clock())) record.madeHere = true;
      return decision;
    },
    {
      // Checked again where the photo is counted: the account's bindings take this in turn, each seeing
      // the others' bytes, so uploads at once cannot pass the limit together (they passed it by one
      // photo each; six at once stored 5.3 times the limit).
      checkWritten: async (sql) => {
        await sql.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
          `hallmark:photo-bytes:${owner.accountId}:${owner.environment}`,
        ]);
        const withThis = await photoStorageOf(sql, owner, deps.photoBytesPerAccount);
        if (withThis.usedBytes > withThis.limitBytes) {
          const full = checkPhotoStorage({ ...withThis, usedBytes: withThis.usedBytes - bytes.length }, bytes.length);
          if (full) throw toHallmarkError(full);
        }
        // Bound with its event: from now on no refused upload of these bytes removes the record.
        await markPhotoBlobBound(sql, request.sha256, deps.clock());
      },
    },
  );
  // Nothing appended: the key's binding was stored (by this upload's first attempt, before or racing it).
  if (appended.length === 0 && eventId) {
    const stored = storedBinding(state, history, eventId);
    if (stored) return stored;
  }
  if (!bound || state.photos.get(request.angle)?.sha256 !== bound.sha256) {
    throw new Error('The photo was recorded but is not in the object’s history.');
  }
  return photoUploaded(state, request.angle, bound);
}

/**
 * Removes a refused upload's blob unless some object's photo has these bytes. Checked again after
 * the removal: an upload of the same bytes recorded in between gets them back (and that upload,
 * for its part, puts them back when it finds them gone after binding).
 */
async function forgetUnboundBlob(deps: BindPhotoDeps, sha256: string, bytes: Buffer): Promise<void> {
  if (await isPhotoBlob(deps.db, sha256)) return;
  await deps.blobs.delete(sha256);
  if (await isPhotoBlob(deps.db, sha256)) await deps.blobs.put(bytes);
}
