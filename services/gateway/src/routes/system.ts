import {
  type BackendService,
  buildOpenApiDocument,
  HallmarkError,
  healthRoute,
  openApiRoute,
  type PingRequest,
  pingRpc,
  pingServiceRoute,
  readyRoute,
  routes,
} from '@hallmark/contracts';
import { checkReadiness, type ReadinessChecks } from '@hallmark/runtime';
import type { FastifyInstance } from 'fastify';
import { registerRoute } from '../route-registry.ts';
import type { ServiceCaller } from '../service-call.ts';

const openApiDocument = buildOpenApiDocument(routes, {
  title: 'Hallmark API',
  version: '1.0.0',
  description: 'Signed GS1 Digital Link codes, verification, provenance and compliance.',
});

/** GET /health, GET /ready, GET /api/v1/openapi.json, POST /api/v1/system/ping/{service}. */
export function registerSystemRoutes(app: FastifyInstance, deps: { services: ServiceCaller; readiness: ReadinessChecks }): void {
  registerRoute(app, healthRoute, async () => ({ status: 'ok' }));

  registerRoute(app, readyRoute, async () => {
    const report = await checkReadiness(deps.readiness);
    if (!report.ready) {
      throw new HallmarkError('SERVICE_UNAVAILABLE', 'A dependency is not reachable.', { checks: report.checks });
    }
    return { status: 'ready', checks: report.checks };
  });

  registerRoute(app, openApiRoute, async () => openApiDocument);

  registerRoute(app, pingServiceRoute, async (request) => {
    const { service } = request.params as { service: BackendService };
    return deps.services.call(pingRpc(service), request.body as PingRequest, request.id);
  });
}
