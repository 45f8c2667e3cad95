import { defineRoute } from './http-route.ts';
import { CreateSessionBody, SessionView, UpdateSessionBody } from './schemas/sessions.ts';

// The web console's sessions (docs/API.md, "Console sessions"; docs/SECURITY.md, "Console sessions").

const apiPrefix = '/api/v1';

const example = {
  session: {
    id: 'ses_3f1c2a9b8e7d6c5b4a39',
    environment: 'live',
    createdAt: '2026-01-15T09:30:00.000Z',
    expiresAt: '2026-01-15T21:30:00.000Z',
    idleExpiresAt: '2026-01-15T10:00:00.000Z',
  },
  key: {
    id: 'key_8a7b6c5d4e3f2a1b0c9d',
    name: 'console',
    environment: 'live',
    scopes: ['*'],
    isOperator: false,
    restrictions: null,
  },
  account: { id: 'acc_1a2b3c4d5e6f7a8b9c0d', name: 'Acme', tier: 'starter' },
  environments: ['live', 'test'],
};

export const createSessionRoute = defineRoute({
  operationId: 'createSession',
  method: 'POST',
  path: `${apiPrefix}/sessions`,
  summary:
    'Sign in to the console with an API key: answers the session and sets the `hallmark_session` cookie (HttpOnly, SameSite=Strict, Path=/, Secure over HTTPS). ' +
    'A wrong, revoked or expired key is 401 with the x-api-key codes and counts toward the address’s failed authentications. ' +
    'An `Origin` other than the gateway’s own is 403 CSRF_REJECTED; signing in again ends the session the request’s cookie held.',
  tags: ['sessions'],
  auth: 'public',
  publicRateLimit: true,
  body: CreateSessionBody,
  responses: { 201: { description: 'Signed in; the cookie is set', schema: SessionView } },
  errors: ['INVALID_API_KEY', 'EXPIRED_API_KEY', 'REVOKED_API_KEY', 'RATE_LIMITED', 'CSRF_REJECTED'],
  examples: { body: { apiKey: `svc_live_${'0'.repeat(64)}` }, responses: { 201: example } },
});

export const getSessionRoute = defineRoute({
  operationId: 'getCurrentSession',
  method: 'GET',
  path: `${apiPrefix}/sessions/current`,
  summary: 'The session of the `hallmark_session` cookie: 401 MISSING_API_KEY when there is none or it ended.',
  tags: ['sessions'],
  auth: 'session',
  responses: { 200: { description: 'The session', schema: SessionView } },
  errors: [],
  examples: { responses: { 200: example } },
});

export const updateSessionRoute = defineRoute({
  operationId: 'updateCurrentSession',
  method: 'PATCH',
  path: `${apiPrefix}/sessions/current`,
  summary:
    'Switch the session’s environment: a live key’s session may act in test (and back); a test key’s may not act in live (403 INSUFFICIENT_SCOPE); a key restricted to some GTINs acts in its own only (403 KEY_RESTRICTED). Needs `X-Hallmark-Console: 1`.',
  tags: ['sessions'],
  auth: 'session',
  body: UpdateSessionBody,
  responses: { 200: { description: 'The session, switched', schema: SessionView } },
  errors: ['INSUFFICIENT_SCOPE', 'KEY_RESTRICTED'],
  examples: {
    body: { environment: 'test' },
    responses: { 200: { ...example, session: { ...example.session, environment: 'test' } } },
  },
});

export const deleteSessionRoute = defineRoute({
  operationId: 'deleteCurrentSession',
  method: 'DELETE',
  path: `${apiPrefix}/sessions/current`,
  summary:
    'Sign out: the session is deleted (every gateway refuses it at once) and the cookie cleared. Needs `X-Hallmark-Console: 1`.',
  tags: ['sessions'],
  auth: 'session',
  responses: { 204: { description: 'Signed out' } },
  errors: [],
});

export const sessionRoutes = [createSessionRoute, getSessionRoute, updateSessionRoute, deleteSessionRoute] as const;
