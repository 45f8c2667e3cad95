import { checkAi82Value, checkGtin14, writesRealDateTime } from '@hallmark/gs1';

export interface GenerateInput {
  gtin?: string | undefined;
  serialNumber?: string | undefined;
  batchNumber?: string | undefined;
  expiryDate?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface ValidGenerateRequest {
  gtin: string;
  serial: string;
  batch: string | undefined;
  /** AI 17, YYMMDD. */
  expiry: string | undefined;
  metadata: Record<string, unknown>;
  /** When verification starts answering EXPIRED_CODE; null: never. */
  expiresAt: Date | null;
}

export interface GenerateProblem {
  code: 'MISSING_REQUIRED_FIELD' | 'INVALID_GTIN' | 'VALIDATION_ERROR';
  message: string;
  details: Record<string, unknown>;
}

const maxMetadataBytes = 16 * 1024;
const testCodeLifetimeMs = 24 * 3_600_000;

/** `2027-12-31` or a date-time → `271231` (UTC), for years 2000–2099 (AI 17 has two digits). */
export function toYymmdd(isoDate: string): string | undefined {
  // 2027-02-30, or 2031-02-30T00:00:00Z, which new Date reads as 2 March.
  if (!/^\d{4}-\d{2}-\d{2}(T.*)?$/.test(isoDate) || !writesRealDateTime(isoDate)) return undefined;
  const date = new Date(isoDate.length === 10 ? `${isoDate}T00:00:00Z` : isoDate);
  if (Number.isNaN(date.getTime())) return undefined;
  const iso = date.toISOString();
  const year = date.getUTCFullYear();
  if (year < 2000 || year > 2099) return undefined;
  return iso.slice(2, 10).replaceAll('-', '');
}

/** The first moment after an AI 17 date: the end of that day, or of the month when the day is 00. */
export function endOfYymmdd(yymmdd: string): Date {
  const year = 2000 + Number(yymmdd.slice(0, 2));
  const month = Number(yymmdd.slice(2, 4));
  const day = Number(yymmdd.slice(4, 6));
  return day === 0 ? new Date(Date.UTC(year, month, 1)) : new Date(Date.UTC(year, month - 1, day + 1));
}

/** `YYMMDD` → `YYYY-MM-DD` (day 00 written as the month's last day). */
export function yymmddToIsoDate(yymmdd: string): string {
  return new Date(endOfYymmdd(yymmdd).getTime() - 1).toISOString().slice(0, 10);
}

/**
 * Checks a generate request the way the spec answers it: a missing gtin or serialNumber is
 * MISSING_REQUIRED_FIELD, a bad GTIN INVALID_GTIN with provided and expected, anything else wrong
 * VALIDATION_ERROR naming the field. Test codes expire 24 hours after creation; a code with an
 * expiry date expires at the end of that day (whichever comes first).
 */
export function validateGenerateRequest(
  input: GenerateInput,
  environment: 'test' | 'live',
  now: Date,
): { ok: true; request: ValidGenerateRequest } | { ok: false; problem: GenerateProblem } {
  const missing = (['gtin', 'serialNumber'] as const).filter((field) => input[field] === undefined || input[field] === '');
  if (missing.length > 0) {
    return {
      ok: false,
      problem: {
        code: 'MISSING_REQUIRED_FIELD',
        message: `Required: ${missing.join(' and ')}.`,
        details: { fields: missing.map((field) => ({ field, in: 'body', message: 'is required' })) },
      },
    };
  }
  const gtin = input.gtin as string;
  const gtinCheck = checkGtin14(gtin);
  if (!gtinCheck.ok) {
    return {
      ok: false,
      problem: {
        code: 'INVALID_GTIN',
        message: `The GTIN is not valid: ${gtinCheck.message}.`,
        details: {
          provided: gtin,
          expected: gtinCheck.reason === 'check-digit' ? gtinCheck.expected : '14 digits ending in a valid GS1 check digit',
        },
      },
    };
  }
  const fields: Array<{ field: string; in: 'body'; message: string }> = [];
  const serial = input.serialNumber as string;
  const serialProblem = checkAi82Value('serialNumber', serial);
  if (serialProblem) fields.push({ field: 'serialNumber', in: 'body', message: serialProblem.replace(/^serialNumber /, '') });
  if (input.batchNumber !== undefined) {
    const batchProblem = checkAi82Value('batchNumber', input.batchNumber);
    if (batchProblem) fields.push({ field: 'batchNumber', in: 'body', message: batchProblem.replace(/^batchNumber /, '') });
  }
  let expiry: string | undefined;
  if (input.expiryDate !== undefined) {
    expiry = toYymmdd(input.expiryDate);
    if (!expiry)
      fields.push({
        field: 'expiryDate',
        in: 'body',
        message: 'must be an ISO 8601 date (YYYY-MM-DD) or date-time in 2000–2099',
      });
    else if (endOfYymmdd(expiry) <= now) fields.push({ field: 'expiryDate', in: 'body', message: 'is in the past' });
  }
  const metadata = input.metadata ?? {};
  if (Buffer.byteLength(JSON.stringify(metadata)) > maxMetadataBytes) {
    fields.push({ field: 'metadata', in: 'body', message: `is larger than ${maxMetadataBytes / 1024} KiB as JSON` });
  }
  if (fields.length > 0) {
    return {
      ok: false,
      problem: {
        code: 'VALIDATION_ERROR',
        message: `Invalid request: check ${fields.map((f) => f.field).join(', ')}.`,
        details: { fields },
      },
    };
  }
  const deadlines = [
    ...(environment === 'test' ? [new Date(now.getTime() + testCodeLifetimeMs)] : []),
    ...(expiry ? [endOfYymmdd(expiry)] : []),
  ];
  const expiresAt = deadlines.length === 0 ? null : new Date(Math.min(...deadlines.map((date) => date.getTime())));
  return { ok: true, request: { gtin, serial, batch: input.batchNumber, expiry, metadata, expiresAt } };
}
