import {
  decidePublicKeyChange,
  decideSigningKeyRotation,
  environmentFor,
  listKeys,
  recordApiKeyCreation,
  recordApiKeyRevocation,
  recordApiKeyRotation,
  throwRefusal,
  type VerificationKeys,
} from '@hallmark/accounts';
import type { Bus } from '@hallmark/bus';
import {
  broadcasts,
  type CreateApiKeyBody,
  createKeyRoute,
  HallmarkError,
  type ListKeysQuery,
  listKeysRoute,
  type RegisterPublicKeyBody,
  type RotateApiKeyBody,
  revokeKeyRoute,
  rotateApiKeyRoute,
  rotateSigningKeyRoute,
  rotateSigningKeyRpc,
} from '@hallmark/contracts';
import type { EventStore } from '@hallmark/event-store';
import type { SqlDatabase } from '@hallmark/sql';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Authenticator } from '../auth/authenticator.ts';
import type { KeyStop, RateLimiter } from '../auth/rate-limiter.ts';
import { principalOf, requireApiKey } from '../auth/request-auth.ts';
import { registerRoute } from '../route-registry.ts';
import type { ServiceCaller } from '../service-call.ts';
import { withRetryAfter } from './retry-after.ts';

export interface KeyRouteDeps {
  db: SqlDatabase;
  /** Where API keys issued and revoked are recorded (the account's stream), with their rows in the event's transaction. */
  eventStore: EventStore;
  bus: Bus;
  services: ServiceCaller;
  authenticator: Authenticator;
  /** Marks a key revoked or expired at once for every gateway, before the answer (rate-limiter.ts, stop markers). */
  rateLimiter: Pick<RateLimiter, 'markKeyStopped'>;
  verificationKeys: VerificationKeys;
  clock: () => Date;
}

/**
 * Sets the stop marker of a key just revoked or expired. The change is stored already: a failure
 * (the counters unreachable, where no gateway can spend anyway) is logged and the answer stands;
 * the other gateways then drop the key on the broadcast, or within a second on the cache epoch.
 */
async function markStopped(
  deps: KeyRouteDeps,
  request: FastifyRequest,
  key: { accountId: string; keyId: string },
  stop: KeyStop,
): Promise<void> {
  try {
    await deps.rateLimiter.markKeyStopped(key, stop);
  } catch (error) {
    request.log.warn({ err: error, keyId: key.keyId }, 'key stop marker not set; other gateways drop the key on the broadcast');
  }
}

/** POST /keys, GET /keys, POST /keys/{id}/revoke, POST /keys/{id}/rotate, POST /keys/signing/rotate. */
export function registerKeyRoutes(app: FastifyInstance, deps: KeyRouteDeps): void {
  registerRoute(app, createKeyRoute, async (request, reply) => {
    const key = requireApiKey(request);
    const body = request.body as CreateApiKeyBody | RegisterPublicKeyBody;
    reply.status(201);
    if ('publicKey' in body) {
      const refusal = decidePublicKeyChange(key, 'register');
      if (refusal) throwRefusal(refusal);
      const environment = environmentFor(key, body.environment, 'register');
      const registered = await deps.verificationKeys.register({ accountId: key.accountId, environment }, body, {
        keyId: key.keyId,
        now: deps.clock(),
      });
      // A key registered again after its revocation verifies at once on every replica (the cache epoch is the slower path).
      await deps.bus.broadcast(broadcasts.publicKeyRegistered, { kid: registered.id });
      return registered;
    }
    return recordApiKeyCreation({ db: deps.db, eventStore: deps.eventStore }, key, body, deps.clock());
  });

  registerRoute(app, listKeysRoute, async (request) => {
    const key = requireApiKey(request);
    const query = request.query as ListKeysQuery;
    const page = await listKeys(
      deps.db,
      key,
      {
        limit: query.limit ?? 20,
        ...(query.cursor ? { cursor: query.cursor } : {}),
        ...(query.type ? { type: query.type } : {}),
        ...(query.createdBy ? { createdBy: query.createdBy } : {}),
      },
      deps.clock(),
    );
    return { ...page, accountId: key.accountId, environment: key.environment };
  });

  registerRoute(app, revokeKeyRoute, async (request) => {
    const key = requireApiKey(request);
    const { id } = request.params as { id: string };
    const now = deps.clock();
    const owner = { accountId: key.accountId, environment: key.environment };
    const apiKey = await recordApiKeyRevocation({ db: deps.db, eventStore: deps.eventStore }, owner, id, now, key);
    if (apiKey) {
      deps.authenticator.forget(id);
      // Every gateway refuses the key from this answer on: the marker is read by each request's
      // spend; the broadcast (milliseconds) and the cache epoch (a second) then empty their caches.
      await markStopped(deps, request, { accountId: owner.accountId, keyId: id }, 'REVOKED_API_KEY');
      await deps.bus.broadcast(broadcasts.apiKeyRevoked, { keyId: id });
      return { id, type: 'api', status: 'revoked', revokedAt: (apiKey.revokedAt ?? now).toISOString() };
    }
    const verificationKey = await deps.verificationKeys.find(id, owner);
    const ownsKey = verificationKey?.accountId === key.accountId && verificationKey.environment === key.environment;
    if (ownsKey && verificationKey.type === 'public') {
      const refusal = decidePublicKeyChange(key, 'revoke');
      if (refusal) throwRefusal(refusal);
    }
    const publicKey = await deps.verificationKeys.revoke(key, id, now);
    if (publicKey) {
      await deps.bus.broadcast(broadcasts.publicKeyRevoked, { kid: id });
      return { id, type: 'public', status: 'revoked', revokedAt: publicKey.revokedAt ?? now.toISOString() };
    }
    if (ownsKey && verificationKey.type === 'signing') {
      throw new HallmarkError('CONFLICT', 'Signing keys are rotated, not revoked: POST /api/v1/keys/signing/rotate.', { id });
    }
    throw new HallmarkError('NOT_FOUND', 'There is no key with this id.', { id });
  });

  registerRoute(app, rotateApiKeyRoute, async (request, reply) => {
    const key = requireApiKey(request);
    const { id } = request.params as { id: string };
    const { graceSeconds } = request.body as RotateApiKeyBody;
    const rotated = await recordApiKeyRotation(
      { db: deps.db, eventStore: deps.eventStore },
      principalOf(request),
      id,
      graceSeconds,
      deps.clock(),
      key,
    );
    // The old key's expiry changed: this replica drops it at once, the others on the broadcast (or,
    // if that is lost, on the api_keys cache epoch the update moved, within a second).
    deps.authenticator.forget(id);
    // With no grace the old key expired now: every gateway refuses it from this answer on.
    if (graceSeconds === 0)
      await markStopped(deps, request, { accountId: principalOf(request).accountId, keyId: id }, 'EXPIRED_API_KEY');
    await deps.bus.broadcast(broadcasts.apiKeyRevoked, { keyId: id });
    reply.status(201);
    return { ...rotated.created, replaced: rotated.replaced };
  });

  registerRoute(app, rotateSigningKeyRoute, async (request, reply) => {
    // The signing key signs for the whole account (codes, objects, checkpoints), so it counts as a
    // key holding `*`: like any key, it may be replaced only by a key whose scopes include its own.
    const key = requireApiKey(request);
    const refusal = decideSigningKeyRotation(key);
    if (refusal) throwRefusal(refusal);
    const rotated = await withRetryAfter(reply, () =>
      deps.services.call(rotateSigningKeyRpc, { principal: principalOf(request) }, request.id),
    );
    reply.status(201);
    return rotated;
  });
}
