import { describe, expect, it } from 'vitest';
import { endOfYymmdd, toYymmdd, validateGenerateRequest, yearOfYy, yymmddToIsoDate } from './generate-request.ts';

const now = new Date('2026-11-21T12:00:00Z');
const valid = { gtin: '09506000134352', serialNumber: 'SN-1' };

describe('validateGenerateRequest', () => {
  it('accepts a minimal live request that never expires', () => {
    expect(validateGenerateRequest(valid, 'live', now)).toEqual({
      ok: true,
      request: { gtin: '09506000134352', serial: 'SN-1', batch: undefined, expiry: undefined, metadata: {}, expiresAt: null },
    });
  });

  it('expires test codes after 24 hours, and any code at the end of its expiry date', () => {
    const test = validateGenerateRequest(valid, 'test', now);
    expect(test.ok && test.request.expiresAt?.toISOString()).toBe('2026-11-22T12:00:00.000Z');
    const dated = validateGenerateRequest({ ...valid, expiryDate: '2027-03-31' }, 'live', now);
    expect(dated.ok && [dated.request.expiry, dated.request.expiresAt?.toISOString()]).toEqual([
      '270331',
      '2027-04-01T00:00:00.000Z',
    ]);
    const both = validateGenerateRequest({ ...valid, expiryDate: '2026-11-21T23:00:00Z' }, 'test', now);
    expect(both.ok && both.request.expiresAt?.toISOString()).toBe('2026-11-22T00:00:00.000Z');
  });

  it('answers MISSING_REQUIRED_FIELD naming each missing field', () => {
    expect(validateGenerateRequest({}, 'live', now)).toMatchObject({
      ok: false,
      problem: { code: 'MISSING_REQUIRED_FIELD', details: { fields: [{ field: 'gtin' }, { field: 'serialNumber' }] } },
    });
    expect(validateGenerateRequest({ gtin: valid.gtin, serialNumber: '' }, 'live', now)).toMatchObject({
      problem: { code: 'MISSING_REQUIRED_FIELD' },
    });
  });

  it('answers INVALID_GTIN with provided and expected', () => {
    expect(validateGenerateRequest({ ...valid, gtin: '09506000134353' }, 'live', now)).toMatchObject({
      problem: { code: 'INVALID_GTIN', details: { provided: '09506000134353', expected: '09506000134352' } },
    });
    expect(validateGenerateRequest({ ...valid, gtin: '123' }, 'live', now)).toMatchObject({
      problem: { code: 'INVALID_GTIN', details: { provided: '123' } },
    });
  });

  it('answers VALIDATION_ERROR for serial, batch, expiry and metadata problems, all at once', () => {
    const result = validateGenerateRequest(
      {
        ...valid,
        serialNumber: 'S#1',
        batchNumber: 'x'.repeat(21),
        expiryDate: '2020-01-01',
        metadata: { blob: 'x'.repeat(17_000) },
      },
      'live',
      now,
    );
    expect(result).toMatchObject({ problem: { code: 'VALIDATION_ERROR' } });
    if (!result.ok) {
      expect((result.problem.details.fields as Array<{ field: string }>).map((field) => field.field)).toEqual([
        'serialNumber',
        'batchNumber',
        'expiryDate',
        'metadata',
      ]);
    }
  });
});

describe('AI 17 dates', () => {
  it('reads a two-digit year as GS1 does: within 50 years of the current one', () => {
    expect(yearOfYy(26, now)).toBe(2026);
    expect(yearOfYy(76, now)).toBe(2076);
    expect(yearOfYy(77, now)).toBe(1977);
    expect(yearOfYy(99, now)).toBe(1999);
    expect(yearOfYy(0, now)).toBe(2000);
    // Near a century's end the window runs into the next one.
    const late = new Date('2080-06-01T00:00:00Z');
    expect(yearOfYy(30, late)).toBe(2130);
    expect(yearOfYy(31, late)).toBe(2031);
    // A link signed elsewhere with 17=991231 expired in 1999, not 2099.
    expect(endOfYymmdd('991231', now).toISOString()).toBe('2000-01-01T00:00:00.000Z');
    expect(endOfYymmdd('761231', now).toISOString()).toBe('2077-01-01T00:00:00.000Z');
  });

  it('signs only a year GS1 reads back as itself: at most 50 years ahead', () => {
    expect(toYymmdd('2076-12-31', now)).toBe('761231');
    expect(toYymmdd('2077-01-01', now)).toBeUndefined();
    expect(toYymmdd('2099-12-31', now)).toBeUndefined();
  });

  it('converts ISO dates and date-times to YYMMDD and back', () => {
    expect(toYymmdd('2027-12-31', now)).toBe('271231');
    expect(toYymmdd('2027-12-31T23:30:00-02:00', now)).toBe('280101');
    expect(toYymmdd('2027-12-31T23:30:00-0200', now)).toBe('280101');
    expect(toYymmdd('2027-12-31T01:30:00+05:00', now)).toBe('271230');
    expect(toYymmdd('2027-12-31T01:30:00+05', now)).toBeUndefined(); // an hour-only offset: refused, not read in the host's zone
    expect(toYymmdd('2027-12-31T23:30:00z', now)).toBe('271231');
    // Without an offset: UTC, whatever the host's zone (the review of 2026-12-04 printed 1 January
    // for this on a host in New York).
    const zone = process.env.TZ;
    try {
      for (const tz of ['UTC', 'America/New_York', 'Pacific/Kiritimati']) {
        process.env.TZ = tz;
        expect(toYymmdd('2027-12-31T23:30:00', now), tz).toBe('271231');
        expect(toYymmdd('2027-12-31T05:00:00.250', now), tz).toBe('271231');
      }
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
    expect(toYymmdd('2027-02-30', now)).toBeUndefined();
    // A date-time's date and time must exist too: new Date read 30 February as 2 March.
    expect(toYymmdd('2031-02-30T00:00:00Z', now)).toBeUndefined();
    expect(toYymmdd('2031-02-31T12:00:00.000Z', now)).toBeUndefined();
    expect(toYymmdd('2031-06-30T24:00:00Z', now)).toBeUndefined();
    expect(toYymmdd('2031-06-30T12:60:00Z', now)).toBeUndefined();
    expect(toYymmdd('2028-02-29T12:00:00Z', now)).toBe('280229');
    expect(toYymmdd('1999-12-31', now)).toBeUndefined();
    expect(toYymmdd('next year', now)).toBeUndefined();
    expect(yymmddToIsoDate('271231')).toBe('2027-12-31');
    expect(yymmddToIsoDate('270200')).toBe('2027-02-28');
    expect(endOfYymmdd('270200').toISOString()).toBe('2027-03-01T00:00:00.000Z');
  });
});
