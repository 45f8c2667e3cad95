import {
  type ApiKeyRecord,
  type AuthenticatedKey,
  type ConsoleSession,
  findAccount,
  findApiKeyById,
  restrictionsViewOf,
} from '@hallmark/accounts';
import {
  type CreateSessionBody,
  createSessionRoute,
  deleteSessionRoute,
  type Environment,
  getSessionRoute,
  HallmarkError,
  type SessionView,
  type UpdateSessionBody,
  updateSessionRoute,
} from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator } from '../auth/authenticator.ts';
import { type ConsoleSessions, noSession } from '../auth/console-sessions.ts';
import { foreignOriginRefusal } from '../auth/csrf.ts';
import type { RateLimiter } from '../auth/rate-limiter.ts';
import {
  clearedSessionCookie,
  clearedSessionCookies,
  sessionCookie,
  sessionTokenOf,
  sessionTokensOf,
  severalSessionCookies,
  severalSessionCookiesWhy,
} from '../auth/session-cookie.ts';
import { registerRoute } from '../route-registry.ts';

export interface SessionRouteDeps {
  db: SqlExecutor;
  sessions: ConsoleSessions;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  /** The gateway's own origins (auth/csrf.ts): a sign-in from another site's page is refused. */
  ownOrigins: (request: FastifyRequest) => readonly string[];
}

const isHttps = (request: FastifyRequest) => request.protocol === 'https';

/**
 * The environments a key's session may act in: a live key's, live and test (as it may make test
 * keys); a test key's, test; a key restricted to some GTINs, its own (it makes no key, and its test
 * twin would spend the account's test budget, which the restriction never gave it).
 */
const environmentsOf = (key: Pick<ApiKeyRecord, 'environment' | 'restrictions'>): Environment[] =>
  key.environment === 'live' && key.restrictions === null ? ['live', 'test'] : [key.environment];

/** What the session routes answer: the session, its key (its own environment), the account and where it may act. */

async function sessionViewOf(db: SqlExecutor, session: ConsoleSession): Promise<SessionView> {
  const [key, account] = await Promise.all([findApiKeyById(db, session.keyId), findAccount(db, session.accountId)]);
  if (!key || !account) throw noSession('its key is gone');
  return {
    session: {
      id: session.id,
      environment: session.environment,
      createdAt: session.createdAt.toISOString(),
      expiresAt: session.expiresAt.toISOString(),
      idleExpiresAt: session.idleExpiresAt.toISOString(),
    },
    key: {
      id: key.id,
      name: key.name,
      environment: key.environment,
      scopes: [...key.scopes],
      isOperator: key.isOperator,
      restrictions: restrictionsViewOf(key.restrictions),
    },
    account: { id: account.id, name: account.name, tier: account.tier },
    environments: environmentsOf(key),
  };
}

/**
 * The cookie's session, or 401 MISSING_API_KEY (and the cookie cleared) when there is none or it
 * ended. A cookie that is no session counts as a failed authentication of the address (each is a
 * database look-up): past the limit, 429 with Retry-After instead of the 401.
 */
async function currentSession(deps: SessionRouteDeps, request: FastifyRequest, reply: FastifyReply) {
  const token = sessionTokenOf(request.headers.cookie, isHttps(request));
  if (token === undefined) throw noSession('no session cookie was sent');
  if (token === severalSessionCookies) {
    reply.header('set-cookie', clearedSessionCookies(isHttps(request), request.url));
    throw noSession(severalSessionCookiesWhy);
  }
  try {
    const authenticated = await deps.sessions.authenticate(token);
    await refuseStoppedKey(deps, authenticated.key);
    return authenticated;
  } catch (error) {
    if (!(error instanceof HallmarkError && error.status === 401)) throw error;
    reply.header('set-cookie', clearedSessionCookie(isHttps(request)));
    return refuseSignIn(deps, request, reply, error);
  }
}

/**
 * The key's stop markers, which a revocation through any gateway sets before it answers: this
 * gateway's cache may not have heard of it yet (the broadcast is on its way), and a sign-in or a
 * session's look-up with a key revoked elsewhere is refused at once, as an API request is.
 */
async function refuseStoppedKey(deps: SessionRouteDeps, key: AuthenticatedKey): Promise<void> {
  const stopped = await deps.rateLimiter.checkKeyStopped(key);
  if (stopped?.keyRefusal) throw stopped.keyRefusal;
}

/**
 * A key that failed sign-in counts against the client address as a bad x-api-key does (the
 * failed-authentication limit per minute); past it, 429 with Retry-After instead of the 401.
 */
async function refuseSignIn(
  deps: SessionRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
): Promise<never> {
  if (!(error instanceof HallmarkError)) throw error;
  const outcome = await deps.rateLimiter.spendFailedAuthentication(request.ip);
  if (outcome.allowed) throw error;
  reply.header('retry-after', outcome.retryAfterSeconds);
  throw new HallmarkError(
    'RATE_LIMITED',
    `Too many failed authentications from this address; retry after ${outcome.retryAfterSeconds} s.`,
    { limit: outcome.refusedBy, retryAfterSeconds: outcome.retryAfterSeconds },
  );
}

/** POST /sessions, GET|PATCH|DELETE /sessions/current: the web console's sign-in (docs/SECURITY.md, "Console sessions"). */
export function registerSessionRoutes(app: FastifyInstance, deps: SessionRouteDeps): void {
  registerRoute(app, createSessionRoute, async (request, reply) => {
    const foreign = foreignOriginRefusal(request, deps.ownOrigins(request));
    if (foreign) throw foreign;
    const { apiKey } = request.body as CreateSessionBody;
    let key: AuthenticatedKey;
    try {
      key = await deps.authenticator.authenticate(apiKey);
      await refuseStoppedKey(deps, key);
    } catch (error) {
      return refuseSignIn(deps, request, reply, error);
    }
    const { session, token } = await deps.sessions.start(key);
    // Signing in again replaces the session this browser had: the old token ends here. Of several
    // (one set by another page of this host, severalSessionCookies), each ends, and the cookies at
    // narrower paths are removed, so the new one at Path=/ is the only one sent.
    const previous = sessionTokensOf(request.headers.cookie, isHttps(request));
    for (const old of previous) await deps.sessions.end(old);
    const removed = previous.length > 1 ? clearedSessionCookies(isHttps(request), request.url, { keepRoot: true }) : [];
    reply
      .status(201)
      .header('set-cookie', [...removed, sessionCookie(token, isHttps(request))])
      .header('cache-control', 'no-store');
    return sessionViewOf(deps.db, session);
  });

  registerRoute(app, getSessionRoute, async (request, reply) => {
    const { session } = await currentSession(deps, request, reply);
    return sessionViewOf(deps.db, session);
  });

  registerRoute(app, updateSessionRoute, async (request, reply) => {
    const { environment } = request.body as UpdateSessionBody;
    const { session } = await currentSession(deps, request, reply);
    const key = await findApiKeyById(deps.db, session.keyId);
    if (!key) throw noSession('its key is gone');
    // A live key may act in test (as it may make test keys); a test key never in live.
    if (key.environment === 'test' && environment === 'live') {
      throw new HallmarkError('INSUFFICIENT_SCOPE', 'A test key’s session cannot act in live; sign in with a live key.', {
        required: 'environment:live',
        granted: 'environment:test',
      });
    }
    if (!environmentsOf(key).includes(environment)) {
      throw new HallmarkError(
        'KEY_RESTRICTED',
        'A key restricted to some GTINs acts in its own environment only; sign in with a key of the other environment.',
        { restrictedTo: restrictionsViewOf(key.restrictions) },
      );
    }
    const switched = await deps.sessions.switchEnvironment(session, environment);
    return sessionViewOf(deps.db, switched);
  });

  registerRoute(app, deleteSessionRoute, async (request, reply) => {
    const tokens = sessionTokensOf(request.headers.cookie, isHttps(request));
    for (const token of tokens) await deps.sessions.end(token);
    reply
      .status(204)
      .header(
        'set-cookie',
        tokens.length > 1 ? clearedSessionCookies(isHttps(request), request.url) : clearedSessionCookie(isHttps(request)),
      );
    return undefined;
  });
}
