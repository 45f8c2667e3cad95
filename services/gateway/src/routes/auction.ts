import { createHash } from 'node:crypto';
import type { BlobStore } from '@hallmark/blob-store';
import {
  auctionDashboardRoute,
  auctionDashboardRpc,
  bindPhotoRpc,
  cancelTransferRoute,
  cancelTransferRpc,
  confirmTransferRoute,
  confirmTransferRpc,
  type DashboardQuery,
  HallmarkError,
  type InitiateTransferBody,
  initiateTransferRoute,
  initiateTransferRpc,
  objectLabelStandingRpc,
  type ProvenanceEventBody,
  provenanceHistoryRoute,
  provenanceHistoryRpc,
  publicVerifyObjectRoute,
  publicVerifyObjectRpc,
  type RegisterObjectBody,
  recordProvenanceEventRoute,
  recordProvenanceEventRpc,
  registerObjectRoute,
  registerObjectRpc,
  uploadPhotoRoute,
} from '@hallmark/contracts';
import { objectGtin } from '@hallmark/gs1';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { principalOf } from '../auth/request-auth.ts';
import { type Idempotency, requestKeyField } from '../idempotency.ts';
import { madeByEarlierAttempt } from '../prepaid-work.ts';
import { registerRoute } from '../route-registry.ts';
import type { ServiceCaller } from '../service-call.ts';
import type { ReceiveBody, UploadSlots } from '../upload-slots.ts';
import { withOwnersWord } from './object-label-standing.ts';
import { withRetryAfter } from './retry-after.ts';

const paramOf = (request: FastifyRequest, name: string) => (request.params as Record<string, string>)[name] as string;

/** The most fields (besides its file) a photo upload takes: the angle, and room for a client's own. */
export const maxUploadFields = 20;

const tooManyParts = (over: 'fields' | 'files') =>
  new HallmarkError('PAYLOAD_TOO_LARGE', `A photo upload holds one file and at most ${maxUploadFields} fields.`, {
    limit: over === 'files' ? { files: 1 } : { fields: maxUploadFields },
  });

/**
 * What the multipart parser threw, as an answer: its own limits carry a 4xx status (a file too
 * large, more than one file, more than 20 fields: 413); anything else is a body it could not read
 * (cut short, no boundary), 400, never 500.
 */
function multipartProblem(error: unknown): unknown {
  const { statusCode: status, code } = (error ?? {}) as { statusCode?: unknown; code?: unknown };
  // The parser's own words for its limits ("The request body is too large" for a body of a few bytes).
  if (code === 'FST_FILES_LIMIT') return tooManyParts('files');
  if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') return tooManyParts('fields');
  if (error instanceof HallmarkError || (typeof status === 'number' && status >= 400 && status < 500)) return error;
  return new HallmarkError(
    'VALIDATION_ERROR',
    'Invalid request: the multipart body could not be read (cut short, without a boundary, or with too many fields).',
    { fields: [{ field: 'body', in: 'body', message: error instanceof Error ? error.message : 'unreadable multipart body' }] },
  );
}

/** The parts of a multipart upload that matter: the first `photo` file's bytes in memory (bounded by the upload limit), the `angle`. */
async function readParts(request: FastifyRequest): Promise<{ bytes: Buffer | undefined; angle: string | undefined }> {
  let bytes: Buffer | undefined;
  let angle: string | undefined;
  let fields = 0;
  try {
    for await (const part of request.parts()) {
      if (part.type !== 'file' && ++fields > maxUploadFields) throw tooManyParts('fields');
      if (part.type === 'file') {
        if (part.fieldname !== 'photo' || bytes) {
          await part.toBuffer();
          continue;
        }
        bytes = await part.toBuffer();
      } else if (part.fieldname === 'angle') {
        angle = String(part.value);
      }
    }
  } catch (error) {
    throw multipartProblem(error);
  }
  return { bytes, angle };
}

/**
 * The `photo` file and `angle` field of a multipart upload, in either order, read through `receive`
 * (which gives up when the upload's time is over or its client left: upload-slots.ts).
 */
async function readPhotoUpload(request: FastifyRequest, receive: ReceiveBody): Promise<{ bytes: Buffer; angle: string }> {
  if (!request.isMultipart()) {
    throw new HallmarkError('UNSUPPORTED_MEDIA_TYPE', 'Send the photo as multipart/form-data with fields photo and angle.');
  }
  const { bytes, angle } = await receive(readParts(request));
  const missing = [...(bytes ? [] : ['photo']), ...(angle ? [] : ['angle'])];
  if (!bytes || !angle) {
    throw new HallmarkError('VALIDATION_ERROR', `Invalid request: check ${missing.join(', ')}.`, {
      fields: missing.map((field) => ({ field, in: 'body', message: 'is required' })),
    });
  }
  return { bytes, angle };
}

/** /auction/objects/register, …/{objectId}/photos, /auction/provenance/events, /auction/public/verify/{serial}, …/provenance, /auction/transfers/…, /auction/dashboard/objects. */
export function registerAuctionRoutes(
  app: FastifyInstance,
  deps: { services: ServiceCaller; blobs: BlobStore; idempotency: Idempotency; uploads: UploadSlots },
): void {
  registerRoute(app, registerObjectRoute, async (request, reply) => {
    const { madeBefore, ...registered } = await deps.services.call(
      registerObjectRpc,
      { principal: principalOf(request), body: request.body as RegisterObjectBody, ...requestKeyField(request) },
      request.id,
    );
    // A rerun whose first answer was lost is answered the object that attempt registered and paid for: it spends nothing again.
    if (madeBefore) madeByEarlierAttempt(request);
    reply.status(201);
    return registered;
  });

  // The upload's slot is taken before its body is read, so that the bytes held in memory are bounded.
  registerRoute(app, uploadPhotoRoute, (request, reply) =>
    deps.uploads.run(request, reply, (receive) => uploadPhoto(request, reply, receive)),
  );

  async function uploadPhoto(request: FastifyRequest, reply: FastifyReply, receive: ReceiveBody) {
    const { bytes, angle } = await readPhotoUpload(request, receive);
    // The file came after the headers were checked, maybe long after: a key revoked meanwhile binds nothing.
    await request.server.confirmKeyStillWorks(request);
    // The request is known only now: a retry with the same Idempotency-Key, angle and file gets the first answer.
    const photoSha256 = createHash('sha256').update(bytes).digest('hex');
    if (!(await deps.idempotency.admit(request, reply, { angle, photo: photoSha256 }))) return reply;
    // The bytes go to the blob store, not over the bus (1 MB messages); the service reads them back to check and bind.
    const { sha256 } = await deps.blobs.put(bytes);
    const bound = await withRetryAfter(reply, () =>
      deps.services.call(
        bindPhotoRpc,
        {
          principal: principalOf(request),
          objectId: paramOf(request, 'objectId'),
          angle,
          sha256,
          ...requestKeyField(request),
        },
        request.id,
      ),
    );
    reply.status(201);
    return bound;
  }

  registerRoute(app, recordProvenanceEventRoute, async (request, reply) => {
    const recorded = await deps.services.call(
      recordProvenanceEventRpc,
      {
        principal: principalOf(request),
        body: request.body as ProvenanceEventBody,
        ...requestKeyField(request),
      },
      request.id,
    );
    reply.status(201);
    return recorded;
  });

  // The object's record, then what its label's owner said of the label (object-label-standing.ts):
  // a look-up by serial is no scan, but a label blocked as counterfeit is never `authentic` here.
  registerRoute(app, publicVerifyObjectRoute, async (request) => {
    const serial = paramOf(request, 'serial');
    const object = await deps.services.call(publicVerifyObjectRpc, { serial }, request.id);
    if (object.status === 'test') return object;
    const standing = await deps.services.call(objectLabelStandingRpc, { gtin: objectGtin(serial), serial }, request.id);
    return withOwnersWord(object, standing);
  });

  registerRoute(app, provenanceHistoryRoute, async (request) =>
    deps.services.call(provenanceHistoryRpc, { principal: principalOf(request), serial: paramOf(request, 'serial') }, request.id),
  );

  registerRoute(app, initiateTransferRoute, async (request, reply) => {
    const initiated = await deps.services.call(
      initiateTransferRpc,
      {
        principal: principalOf(request),
        body: request.body as InitiateTransferBody,
        ...requestKeyField(request),
      },
      request.id,
    );
    reply.status(201);
    return initiated;
  });

  registerRoute(app, confirmTransferRoute, async (request) =>
    deps.services.call(
      confirmTransferRpc,
      {
        principal: principalOf(request),
        transferId: paramOf(request, 'transferId'),
        transferCode: (request.body as { transferCode: string }).transferCode,
        ...requestKeyField(request),
      },
      request.id,
    ),
  );

  registerRoute(app, cancelTransferRoute, async (request) =>
    deps.services.call(
      cancelTransferRpc,
      { principal: principalOf(request), transferId: paramOf(request, 'transferId') },
      request.id,
    ),
  );

  registerRoute(app, auctionDashboardRoute, async (request) =>
    deps.services.call(
      auctionDashboardRpc,
      { principal: principalOf(request), query: request.query as DashboardQuery },
      request.id,
    ),
  );
}
