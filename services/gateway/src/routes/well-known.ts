import type { VerificationKeys } from '@hallmark/accounts';
import { jwksRoute } from '@hallmark/contracts';
import type { FastifyInstance } from 'fastify';
import { registerRoute } from '../route-registry.ts';
import { type SerialisedJson, sendSerialisedJson, serialiseJson } from './serialised-json.ts';

/**
 * GET /.well-known/jwks.json: every key a code may be signed with, for offline verification. The key
 * set is one object until it is published again (a key or a GTIN claim changed), serialised once each
 * time: a download costs the gateway the bytes' sending, not a serialisation.
 */
export function registerWellKnownRoutes(app: FastifyInstance, deps: { verificationKeys: VerificationKeys }): void {
  let serialised: { of: object; document: SerialisedJson } | undefined;
  registerRoute(app, jwksRoute, async (request, reply) => {
    const jwks = await deps.verificationKeys.jwks();
    if (serialised?.of !== jwks) serialised = { of: jwks, document: serialiseJson(jwks) };
    return sendSerialisedJson(request, reply, serialised.document, 'public, max-age=300');
  });
}
