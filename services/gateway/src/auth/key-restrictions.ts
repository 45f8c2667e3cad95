import { type AuthenticatedKey, restrictionsViewOf } from '@hallmark/accounts';
import { HallmarkError, type RouteDefinition } from '@hallmark/contracts';
import { asGtin14, parseDigitalLink } from '@hallmark/gs1';
import type { FastifyInstance, FastifyRequest } from 'fastify';

// A key restricted to some GTINs (POST /keys `restrictions`; spec, Authentication 7) may use only the
// operations listed here, each with the GTINs a request to it names; every GTIN it names must be one
// of the key's. Every other operation (keys, webhooks, compliance, auction objects, account-wide
// scans and usage, …) is refused before anything is spent: a leaked restricted key reaches the codes
// of its GTINs and nothing else. docs/API.md, "Resource restrictions".

/**
 * How much of the account's shared room a restricted key may hold (docs/API.md, "Resource
 * restrictions"): a leaked one fills at most this many of the account's active blocks
 * (HALLMARK_MAX_ACTIVE_BLOCKS, 10,000 by default) and links (100,000), so the brand can still block
 * and link after it. The services count the key's own (its blocks still active, its links still there).
 */
export interface RestrictedKeyLimits {
  /** HALLMARK_RESTRICTED_KEY_MAX_ACTIVE_BLOCKS */
  activeBlocks: number;
  /** HALLMARK_RESTRICTED_KEY_MAX_LINKS */
  links: number;
}

/** The limit of its own a key is held to (`limit` when it is restricted), as the services' `keyLimit` field; none for another key. */
export function keyLimitOf(key: AuthenticatedKey, limit: number): { keyLimit?: number } {
  return key.restrictions ? { keyLimit: limit } : {};
}

/** The GTINs a request names, or why a restricted key may not make it at all. */
type GtinsNamed = (request: FastifyRequest, key: AuthenticatedKey) => readonly string[] | HallmarkError;

const bodyOf = (request: FastifyRequest) => (request.body ?? {}) as Record<string, unknown>;
const queryOf = (request: FastifyRequest) => (request.query ?? {}) as Record<string, unknown>;

/**
 * A `gtin` member as sent: a string names that GTIN, whatever its form (compared as its GTIN-14, so a
 * listed GTIN sent with 13 digits reaches the service, which refuses it as INVALID_GTIN).
 */
const gtinOf = (value: unknown): string[] => (typeof value === 'string' ? [value] : []);

/**
 * The GTIN of a link as the verify and report handlers read it (the same parser): a link that does
 * not parse names none, and its request is refused by the service for that, having reached nothing.
 */
const gtinOfLink = (value: unknown): string[] => {
  if (typeof value !== 'string') return [];
  const parsed = parseDigitalLink(value);
  return parsed.ok ? [parsed.link.gtin] : [];
};

const gtinInBody: GtinsNamed = (request) => gtinOf(bodyOf(request).gtin);
const gtinsOfItems: GtinsNamed = (request) => {
  const items = bodyOf(request).items;
  return Array.isArray(items) ? items.flatMap((item) => gtinOf((item as { gtin?: unknown } | null)?.gtin)) : [];
};
const gtinOfLinkInBody: GtinsNamed = (request) => {
  const body = bodyOf(request);
  return [...gtinOfLink(body.url), ...gtinOfLink(body.content)];
};

/**
 * A listing, filtered by one GTIN: a restricted key names one of its own with `gtin=` (the listings
 * take one GTIN; a key listing without it would read every GTIN of the account).
 */
const gtinFilter: GtinsNamed = (request, key) => {
  const gtin = queryOf(request).gtin;
  if (typeof gtin === 'string') return [gtin];
  return new HallmarkError(
    'KEY_RESTRICTED',
    'This API key is restricted to some GTINs: list one of them at a time, with the gtin parameter.',
    {
      restrictedTo: restrictionsViewOf(key.restrictions),
      fields: [{ field: 'gtin', in: 'query', message: 'is required for a restricted key' }],
    },
  );
};

/**
 * A key revoking itself (docs/API.md: "A key may revoke itself"): whoever finds a restricted key
 * leaked can end it with the key alone. Any other key is beyond it (it makes, rotates and revokes
 * no other key).
 */
const ownKeyOnly: GtinsNamed = (request, key) =>
  (request.params as { id?: string }).id === key.keyId
    ? []
    : new HallmarkError('KEY_RESTRICTED', 'A key restricted to some GTINs may revoke itself only.', {
        restrictedTo: restrictionsViewOf(key.restrictions),
      });

/**
 * The operations a restricted key may use, by operationId, and the GTINs each request names
 * (key-restrictions.unit.test.ts checks that each is a route of the contracts).
 */
export const gtinsNamedBy: ReadonlyMap<string, GtinsNamed> = new Map<string, GtinsNamed>([
  // Its own account and key, and the services' ping: no resource of the account.
  ['getMyAccount', () => []],
  ['pingService', () => []],
  ['revokeKey', ownKeyOnly],
  ['generateCode', gtinInBody],
  ['generateCodeBatch', gtinsOfItems],
  ['verifyCode', gtinOfLinkInBody],
  ['reportCode', gtinOfLinkInBody],
  ['getCodeQr', (request) => gtinOfLink(queryOf(request).url)],
  ['createBlock', gtinInBody],
  ['createLink', gtinInBody],
  ['listCodes', gtinFilter],
  ['listScans', gtinFilter],
  ['listBlocks', gtinFilter],
  ['listLinks', gtinFilter],
  // Named by its asset id: its answer is checked (routes/codes.ts, refuseUnreachableGtin).
  ['getCode', () => []],
]);

/**
 * Refuses, before anything is spent, an operation a restricted key may not use at all
 * (KEY_RESTRICTED); undefined for an unrestricted key or an operation it may use.
 */
export function operationRefusedToKey(key: AuthenticatedKey, route: RouteDefinition): HallmarkError | undefined {
  if (key.restrictions === null || gtinsNamedBy.has(route.operationId)) return undefined;
  return new HallmarkError(
    'KEY_RESTRICTED',
    `This API key is restricted to some GTINs; ${route.method} ${route.path} reaches beyond them. Use a key without restrictions.`,
    { restrictedTo: restrictionsViewOf(key.restrictions) },
  );
}

/** KEY_RESTRICTED for the GTINs of `named` a restricted key does not list (each compared as its GTIN-14). */
export function unlistedGtinsRefusal(key: AuthenticatedKey, named: readonly string[]): HallmarkError | undefined {
  const listed = key.restrictions?.gtins;
  if (!listed) return undefined;
  const unlisted = [...new Set(named.filter((gtin) => !listed.includes(asGtin14(gtin))))];
  if (unlisted.length === 0) return undefined;
  const which =
    unlisted.length === 1
      ? `${unlisted[0]} is not one of them`
      : `${unlisted.slice(0, 10).join(', ')}${unlisted.length > 10 ? ', …' : ''} are not among them`;
  return new HallmarkError('KEY_RESTRICTED', `This API key is restricted to some GTINs, and ${which}.`, {
    restrictedTo: restrictionsViewOf(key.restrictions),
    unlisted: unlisted.slice(0, 100),
  });
}

/**
 * A resource found by its id (a code by its asset id) whose GTIN a restricted key does not list:
 * NOT_FOUND, as another account's is, so its id tells the key nothing.
 */
export function refuseUnreachableGtin(request: FastifyRequest, gtin: string, notFound: () => HallmarkError): void {
  const restrictions = request.apiKey?.restrictions;
  if (restrictions && !restrictions.gtins.includes(gtin)) throw notFound();
}

/**
 * Once a request's body is read and validated: every GTIN it names must be one its restricted key
 * lists (KEY_RESTRICTED, and the quota it spent is given back as for any refusal). A preHandler, after
 * validation, because query strings are coerced by then (a listing's `gtin` is read as validated);
 * so a refused request may have claimed its Idempotency-Key first, which its refusal frees.
 */
export function installKeyRestrictions(app: FastifyInstance): void {
  app.addHook('preHandler', (request, _reply, done) => {
    const key = request.apiKey;
    const route = request.routeOptions.config?.route;
    if (!key?.restrictions || !route) return done();
    const named = gtinsNamedBy.get(route.operationId);
    // An operation not listed was refused as the request came (operationRefusedToKey); refused here again.
    const gtins = named ? named(request, key) : operationRefusedToKey(key, route);
    if (gtins instanceof HallmarkError) return done(gtins);
    done(gtins === undefined ? undefined : unlistedGtinsRefusal(key, gtins));
  });
}
