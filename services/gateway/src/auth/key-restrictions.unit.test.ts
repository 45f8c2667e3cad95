import type { AuthenticatedKey } from '@hallmark/accounts';
import { HallmarkError, type RouteDefinition, routes } from '@hallmark/contracts';
import { describe, expect, it } from 'vitest';
import { gtinsNamedBy, operationRefusedToKey, unlistedGtinsRefusal } from './key-restrictions.ts';

const key = (gtins: string[] | null): AuthenticatedKey => ({
  keyId: 'key_1',
  accountId: 'acc_1',
  environment: 'live',
  scopes: ['*'],
  isOperator: false,
  tier: 'enterprise',
  expiresAt: null,
  restrictions: gtins && { gtins },
});

const byOperation = new Map<string, RouteDefinition>(routes.map((route: RouteDefinition) => [route.operationId, route]));
/** Whether a route's body or query has a `gtin` member. */
const takesGtin = (route: RouteDefinition) =>
  [route.body, route.querystring].some((schema) => Object.hasOwn((schema as { properties?: object })?.properties ?? {}, 'gtin'));

describe('the operations a restricted key may use', () => {
  it('are each a route of the contracts that takes a key', () => {
    for (const operationId of gtinsNamedBy.keys()) {
      const route = byOperation.get(operationId);
      expect(route, operationId).toBeDefined();
      expect(['api-key', 'optional-key'], operationId).toContain(route?.auth);
    }
  });

  it('cover every route that names a GTIN, but those that give or take GTINs themselves', () => {
    // Claiming and granting GTINs changes what the account owns: never a restricted key's.
    const refusedThoughNamingAGtin = new Set(['claimGtin', 'grantGtin']);
    const naming = routes.filter(takesGtin).map((route: RouteDefinition) => route.operationId);
    expect(naming.length).toBeGreaterThan(5);
    for (const operationId of naming) {
      expect(gtinsNamedBy.has(operationId) !== refusedThoughNamingAGtin.has(operationId), operationId).toBe(true);
    }
  });

  it('refuse nothing to a key without restrictions, and every other operation to a restricted one', () => {
    const createKey = byOperation.get('createKey') as RouteDefinition;
    expect(operationRefusedToKey(key(null), createKey)).toBeUndefined();
    expect(operationRefusedToKey(key(['09506000134352']), createKey)).toMatchObject({
      code: 'KEY_RESTRICTED',
      details: { restrictedTo: { gtins: ['09506000134352'] } },
    });
    expect(operationRefusedToKey(key(['09506000134352']), byOperation.get('generateCode') as RouteDefinition)).toBeUndefined();
  });
});

describe('the GTINs a request names', () => {
  const restricted = key(['09506000134352']);

  it('are compared as GTIN-14s: a listed GTIN sent with 13 digits passes on, for the service to refuse its form', () => {
    expect(unlistedGtinsRefusal(restricted, ['09506000134352', '9506000134352'])).toBeUndefined();
  });

  it('are refused when one is not listed, each named once', () => {
    const refusal = unlistedGtinsRefusal(restricted, ['09506000134369', '09506000134352', '09506000134369', ' 09506000134352']);
    expect(refusal).toBeInstanceOf(HallmarkError);
    expect(refusal?.details).toEqual({
      restrictedTo: { gtins: ['09506000134352'] },
      unlisted: ['09506000134369', ' 09506000134352'],
    });
  });

  it('reach anything for a key without restrictions', () => {
    expect(unlistedGtinsRefusal(key(null), ['09506000134369'])).toBeUndefined();
  });
});
