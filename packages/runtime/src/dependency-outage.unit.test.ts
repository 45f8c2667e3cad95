import { HallmarkError } from '@hallmark/contracts';
import { describe, expect, it } from 'vitest';
import { isDependencyOutage, outageAsUnavailable } from './dependency-outage.ts';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('a store outage', () => {
  it('is told apart from an error of the request', () => {
    expect(isDependencyOutage(withCode('terminating connection due to administrator command', '57P01'))).toBe(true);
    expect(isDependencyOutage(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))).toBe(true);
    expect(isDependencyOutage(withCode('the database system is starting up', '57P03'))).toBe(true);
    expect(isDependencyOutage(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDependencyOutage(new Error('Connection is closed.'))).toBe(true);
    expect(isDependencyOutage(new Error('Command timed out'))).toBe(true);
    // pg-pool: no connection came free within its wait (packages/sql's connection-loss test meets it).
    expect(isDependencyOutage(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(
      isDependencyOutage(
        Object.assign(new Error('Reached the max retries per request limit (which is 1).'), {
          name: 'MaxRetriesPerRequestError',
        }),
      ),
    ).toBe(true);
    expect(isDependencyOutage(withCode('duplicate key value violates unique constraint', '23505'))).toBe(false);
    expect(isDependencyOutage(new HallmarkError('NOT_FOUND', 'no'))).toBe(false);
    expect(isDependencyOutage('a string')).toBe(false);
  });

  it('is answered 503 with a retry hint, and anything else passes unchanged', () => {
    expect(outageAsUnavailable(withCode('x', '57P01'))).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      details: { reason: 'dependency', retryAfterSeconds: 1 },
    });
    const other = new Error('a bug');
    expect(outageAsUnavailable(other)).toBe(other);
  });
});
