import type { VerificationKeys } from '@hallmark/accounts';
import { jwksRoute } from '@hallmark/contracts';
import type { FastifyInstance } from 'fastify';
import { registerRoute } from '../route-registry.ts';

/** GET /.well-known/jwks.json: every key a code may be signed with, for offline verification. */
export function registerWellKnownRoutes(app: FastifyInstance, deps: { verificationKeys: VerificationKeys }): void {
  registerRoute(app, jwksRoute, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=300');
    return deps.verificationKeys.jwks();
  });
}
