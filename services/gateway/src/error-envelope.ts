import { type ErrorEnvelope, HallmarkError, toHallmarkError } from '@hallmark/contracts';
import type { FastifyError } from 'fastify';

export function errorEnvelope(error: HallmarkError, requestId: string): ErrorEnvelope {
  return { error: error.toData(), meta: { requestId, timestamp: new Date().toISOString() } };
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** One entry per bad field: where it is, and what is wrong with it. */
function fieldsOf(errors: readonly AjvError[], location: string | undefined) {
  return errors.map((error) => {
    const path = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
    const child = (error.params.missingProperty ?? error.params.additionalProperty) as string | undefined;
    const field = [path, child].filter(Boolean).join('.') || location || 'body';
    const message =
      error.keyword === 'required'
        ? 'is required'
        : error.keyword === 'additionalProperties'
          ? 'is not an accepted field'
          : (error.message ?? 'is invalid');
    return { field, in: location ?? 'body', message };
  });
}

/** Maps what fastify and its plugins throw to the API's codes. Everything unknown is INTERNAL_ERROR. */
export function toApiError(error: unknown): HallmarkError {
  if (error instanceof HallmarkError) return error;
  const fastifyError = error as Partial<FastifyError> & { validation?: AjvError[]; validationContext?: string };
  if (fastifyError.validation) {
    const fields = fieldsOf(fastifyError.validation, fastifyError.validationContext);
    const names = fields.map((field) => field.field).join(', ');
    return new HallmarkError('VALIDATION_ERROR', `Invalid request: check ${names}.`, { fields });
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HallmarkError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return new HallmarkError('PAYLOAD_TOO_LARGE', 'The request body is larger than this endpoint accepts.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HallmarkError('VALIDATION_ERROR', 'The body is empty; send a JSON object or no Content-Type.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new HallmarkError('VALIDATION_ERROR', 'The body is not valid JSON.');
  }
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) {
    return new HallmarkError('VALIDATION_ERROR', 'The body is not valid JSON.');
  }
  const status = fastifyError.statusCode;
  if (status === 413) return new HallmarkError('PAYLOAD_TOO_LARGE', 'The request body is too large.');
  if (status === 415) return new HallmarkError('UNSUPPORTED_MEDIA_TYPE', 'This content type is not accepted here.');
  if (status !== undefined && status >= 400 && status < 500) {
    return new HallmarkError('VALIDATION_ERROR', fastifyError.message ?? 'The request is not valid.');
  }
  return toHallmarkError(error);
}
