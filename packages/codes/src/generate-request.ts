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
  /** Its expiry date has passed (only with `allowPastExpiry`; the item is otherwise valid). */
  pastExpiry?: true;
}

export interface GenerateProblem {
  code: 'MISSING_REQUIRED_FIELD' | 'INVALID_GTIN' | 'VALIDATION_ERROR';
  message: string;
  details: Record<string, unknown>;
}

/** The most a code's metadata may be, as JSON. */
export const maxMetadataBytes = 16 * 1024;
const testCodeLifetimeMs = 24 * 3_600_000;

/**
 * The year an AI 17 `YY` means, by GS1's rule (General Specifications, 7.12): the one within 50
 * years of `now`'s, so in 2026 `77`–`99` are 1977–1999 and `00`–`76` are 2000–2076. Any GS1 reader
 * (a till, a distributor's scanner) reads a printed date so.
 */
export function yearOfYy(yy: number, now: Date): number {
  const current = now.getUTCFullYear();
  const century = current - (current % 100);
  const ahead = yy - (current % 100);
  if (ahead >= 51) return century - 100 + yy;
  if (ahead <= -50) return century + 100 + yy;
  return century + yy;
}

/**
 * `2027-12-31` or a date-time (without an offset: UTC) → `271231` (UTC), for years 2000–2099 that GS1's rule reads back as
 * themselves (yearOfYy: at most 50 years after `now`'s), so no reader takes the code for one that
 * expired a century ago.
 */
export function toYymmdd(isoDate: string, now: Date): string | undefined {
  // 2027-02-30, or 2031-02-30T00:00:00Z, which new Date reads as 2 March.
  if (!/^\d{4}-\d{2}-\d{2}(T.*)?$/.test(isoDate) || !writesRealDateTime(isoDate)) return undefined;
  // A date-time without an offset is read as UTC: `new Date` would read it in the host's zone, and
  // the same request would print another day on a server in New York than on one in UTC.
  const date = new Date(isoDate.length === 10 ? `${isoDate}T00:00:00Z` : hasUtcOffset(isoDate) ? isoDate : `${isoDate}Z`);
  if (Number.isNaN(date.getTime())) return undefined;
  const year = date.getUTCFullYear();
  // Stored codes read their AI 17 as 20YY (endOfYymmdd without `now`), so 2000–2099 as before.
  if (year < 2000 || year > 2099 || yearOfYy(year % 100, now) !== year) return undefined;
  return date.toISOString().slice(2, 10).replaceAll('-', '');
}

/** Whether an ISO 8601 date-time ends with its offset from UTC (`Z`, `+02:00`, `-0500`, `+05`). */
const hasUtcOffset = (isoDateTime: string) => /(?:[Zz]|[+-]\d{2}(?::?\d{2})?)$/.test(isoDateTime.slice(10));

/**
 * The first moment after an AI 17 date: the end of that day, or of the month when the day is 00.
 * The year is 20YY for the codes Hallmark signed (it signs none GS1's rule reads otherwise); given
 * `now`, GS1's rule (yearOfYy), for a link signed elsewhere.
 */
export function endOfYymmdd(yymmdd: string, now?: Date): Date {
  const yy = Number(yymmdd.slice(0, 2));
  const year = now ? yearOfYy(yy, now) : 2000 + yy;
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
  /**
   * `allowPastExpiry`: an item whose only fault is an expiry date now past is answered valid, marked
   * `pastExpiry`, for a retry to find the code its first attempt made (that day) before refusing it
   * with pastExpiryProblem.
   */
  options: { allowPastExpiry?: boolean } = {},
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
          // What was sent, its first 64 characters when longer (the answer need not echo a long body).
          provided: gtin.length > 64 ? `${gtin.slice(0, 64)}…` : gtin,
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
    expiry = toYymmdd(input.expiryDate, now);
    if (!expiry)
      fields.push({
        field: 'expiryDate',
        in: 'body',
        // GS1 reads AI 17's two-digit year within 50 years of the current one.
        message: `must be an ISO 8601 date (YYYY-MM-DD) or date-time, in ${now.getUTCFullYear() + 50} at the latest`,
      });
    else if (endOfYymmdd(expiry) <= now) fields.push(pastExpiryField);
  }
  const metadata = input.metadata ?? {};
  if (Buffer.byteLength(JSON.stringify(metadata)) > maxMetadataBytes) {
    fields.push({ field: 'metadata', in: 'body', message: `is larger than ${maxMetadataBytes / 1024} KiB as JSON` });
  }
  const onlyPastExpiry = options.allowPastExpiry === true && fields.length === 1 && fields[0] === pastExpiryField;
  if (fields.length > 0 && !onlyPastExpiry) return { ok: false, problem: invalidFields(fields) };
  const deadlines = [
    ...(environment === 'test' ? [new Date(now.getTime() + testCodeLifetimeMs)] : []),
    ...(expiry ? [endOfYymmdd(expiry)] : []),
  ];
  const expiresAt = deadlines.length === 0 ? null : new Date(Math.min(...deadlines.map((date) => date.getTime())));
  return {
    ok: true,
    request: {
      gtin,
      serial,
      batch: input.batchNumber,
      expiry,
      metadata,
      expiresAt,
      ...(onlyPastExpiry ? { pastExpiry: true } : {}),
    },
  };
}

const pastExpiryField = Object.freeze({ field: 'expiryDate', in: 'body', message: 'is in the past' } as const);

function invalidFields(fields: ReadonlyArray<{ field: string; in: 'body'; message: string }>): GenerateProblem {
  return {
    code: 'VALIDATION_ERROR',
    message: `Invalid request: check ${fields.map((f) => f.field).join(', ')}.`,
    details: { fields: [...fields] },
  };
}

/** What validateGenerateRequest answers an item whose only fault is an expiry date past. */
export const pastExpiryProblem = (): GenerateProblem => invalidFields([pastExpiryField]);
