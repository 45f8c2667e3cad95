import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { refusedAfterPrepaidWork } from './prepaid-work.ts';

/** A request as the quota and Idempotency-Key hooks leave it, on a route charged per request or per item. */
const requestOf = (fields: {
  per?: 'request' | 'item';
  failedWith?: string;
  failedWithDetails?: unknown;
  mayHaveActed?: boolean;
  spent?: boolean;
}) =>
  ({
    routeOptions: { config: { route: { quota: { kind: 'generate', per: fields.per ?? 'request' } } } },
    quotaSpent: fields.spent === false ? undefined : { key: 'k', cost: 0 },
    mayHaveActed: fields.mayHaveActed ?? false,
    failedWith: fields.failedWith,
    failedWithDetails: fields.failedWithDetails,
  }) as unknown as FastifyRequest;

describe('refusedAfterPrepaidWork', () => {
  it('is a refusal the service decided on the request itself, after the spend, of a route making one thing', () => {
    expect(refusedAfterPrepaidWork(requestOf({ failedWith: 'DUPLICATE_SERIAL' }), 409)).toBe(true);
    expect(refusedAfterPrepaidWork(requestOf({ failedWith: 'INVALID_GTIN' }), 400)).toBe(true);
    expect(refusedAfterPrepaidWork(requestOf({ failedWith: 'MISSING_REQUIRED_FIELD' }), 400)).toBe(true);
  });

  it('is a VALIDATION_ERROR of the request’s own content, which refused the earlier attempt alike', () => {
    const fields = [{ field: 'serialNumber', in: 'body', message: 'must be 1 to 20 characters' }];
    expect(refusedAfterPrepaidWork(requestOf({ failedWith: 'VALIDATION_ERROR', failedWithDetails: { fields } }), 400)).toBe(true);
  });

  it('is not a refusal by something that changed since the earlier attempt, which may still be committing its work', () => {
    // The tenant's own metadata schema, changed by a PATCH (or deleted); a GTIN claim that ended.
    const bySchema = { schemaId: 'sch_1', schemaVersion: 2, errors: [] };
    expect(refusedAfterPrepaidWork(requestOf({ failedWith: 'VALIDATION_ERROR', failedWithDetails: bySchema }), 400)).toBe(false);
    const schemaGone = { fields: [{ field: 'schemaId', in: 'body', message: 'is not a schema of this account' }] };
    expect(refusedAfterPrepaidWork(requestOf({ failedWith: 'VALIDATION_ERROR', failedWithDetails: schemaGone }), 400)).toBe(
      false,
    );
    expect(refusedAfterPrepaidWork(requestOf({ failedWith: 'GTIN_NOT_OWNED' }), 403)).toBe(false);
  });

  it('is not a CONFLICT (maybe the earlier attempt committing the same work), a 5xx, work that may be done, nor before the spend', () => {
    expect(refusedAfterPrepaidWork(requestOf({ failedWith: 'CONFLICT' }), 409)).toBe(false);
    expect(refusedAfterPrepaidWork(requestOf({ failedWith: 'SERVICE_UNAVAILABLE' }), 503)).toBe(false);
    expect(refusedAfterPrepaidWork(requestOf({ failedWith: 'DUPLICATE_SERIAL', mayHaveActed: true }), 409)).toBe(false);
    expect(refusedAfterPrepaidWork(requestOf({ failedWith: 'RATE_LIMITED', spent: false }), 429)).toBe(false);
    expect(refusedAfterPrepaidWork(requestOf({}), 404)).toBe(false);
    // A batch settles its chunks itself.
    expect(refusedAfterPrepaidWork(requestOf({ per: 'item', failedWith: 'VALIDATION_ERROR' }), 400)).toBe(false);
  });
});
