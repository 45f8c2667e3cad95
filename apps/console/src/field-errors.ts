import type { ApiError } from './api.ts';

/**
 * The API's refusal of a body, by field: VALIDATION_ERROR and MISSING_REQUIRED_FIELD name them in
 * `details.fields`; INVALID_GTIN is the GTIN's and DUPLICATE_SERIAL the serial's.
 */
export function fieldErrorsOf(error: {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}): Record<string, string> {
  const byField: Record<string, string> = {};
  const fields = Array.isArray(error.details?.fields)
    ? (error.details.fields as Array<{ field?: unknown; message?: unknown }>)
    : [];
  for (const { field, message } of fields) {
    if (typeof field === 'string') byField[field] = `${field} ${String(message ?? 'is not valid')}`;
  }
  if (error.code === 'INVALID_GTIN' || error.code === 'GTIN_NOT_OWNED') byField.gtin = error.message;
  if (error.code === 'DUPLICATE_SERIAL') byField.serialNumber = error.message;
  return byField;
}

export const describeError = (error: ApiError | { code: string; message: string }) => `${error.message} (${error.code})`;
