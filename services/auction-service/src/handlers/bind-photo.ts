import type { BlobStore } from '@hallmark/blob-store';
import { categoryAngles, HallmarkError, type PhotoUploaded, type Principal } from '@hallmark/contracts';
import { securityFigures } from '../object-history.ts';
import { changeObject, type ObjectRepositoryDeps } from '../object-repository.ts';
import { analysePhoto } from '../photo-analysis.ts';
import { objectView } from './register-object.ts';

/**
 * POST /auction/objects/{objectId}/photos, after the gateway stored the bytes: check the angle
 * against the category, decode the image, and record a `photographed` event with its SHA-256,
 * perceptual hash and anchors. A new photo at an angle replaces the earlier one (the event says so).
 */
export async function bindPhoto(
  deps: ObjectRepositoryDeps & { blobs: BlobStore },
  owner: Principal,
  request: { objectId: string; angle: string; sha256: string },
): Promise<PhotoUploaded> {
  const bytes = await deps.blobs.get(request.sha256);
  if (!bytes)
    throw new HallmarkError('VALIDATION_ERROR', 'Invalid request: the uploaded photo was not found.', { sha256: request.sha256 });
  let replaced = false;
  let analysis: Awaited<ReturnType<typeof analysePhoto>> | undefined;
  const { state } = await changeObject(deps, owner, request.objectId, async (current) => {
    const angles = categoryAngles[current.category] as readonly string[];
    if (!angles.includes(request.angle)) {
      throw new HallmarkError(
        'VALIDATION_ERROR',
        `Invalid request: a ${current.category} takes the angles ${angles.join(', ')}.`,
        {
          fields: [{ field: 'angle', in: 'body', message: `must be one of ${angles.join(', ')}` }],
          allowed: angles,
        },
      );
    }
    analysis ??= await analysePhoto(bytes);
    if (!analysis.ok) {
      throw new HallmarkError('VALIDATION_ERROR', `Invalid request: ${analysis.problem}`, {
        fields: [{ field: 'photo', in: 'body', message: analysis.problem }],
      });
    }
    const previous = current.photos.get(request.angle);
    replaced = previous !== undefined;
    return [
      {
        type: 'photographed',
        data: {
          angle: request.angle,
          sha256: request.sha256,
          size: bytes.length,
          ...analysis.analysis,
          replaced,
          ...(previous ? { replacedSha256: previous.sha256 } : {}),
        },
      },
    ];
  });
  const photo = state.photos.get(request.angle);
  if (!photo || !analysis?.ok) throw new Error('The photo was recorded but is not in the object’s history.');
  return {
    objectId: state.id,
    angle: request.angle,
    sha256: photo.sha256,
    perceptualHash: photo.perceptualHash,
    width: photo.width,
    height: photo.height,
    replaced,
    photo_status: securityFigures(state).photo_status,
    object: objectView(state),
  };
}
