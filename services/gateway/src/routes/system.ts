import {
  type BackendService,
  HallmarkError,
  hallmarkOpenApiDocument,
  healthRoute,
  type Landing,
  landingRoute,
  openApiRoute,
  type PingRequest,
  pingRpc,
  pingServiceRoute,
  readyRoute,
  routes,
} from '@hallmark/contracts';
import { createSharedReadiness, type ReadinessChecks } from '@hallmark/runtime';
import type { FastifyInstance } from 'fastify';
import { registerRoute } from '../route-registry.ts';
import type { ServiceCaller } from '../service-call.ts';
import { type SerialisedJson, sendSerialisedJson, serialiseJson } from './serialised-json.ts';

/** GET /, GET /health, GET /ready, GET /api/v1/openapi.json, POST /api/v1/system/ping/{service}. */
export function registerSystemRoutes(
  app: FastifyInstance,
  deps: {
    services: ServiceCaller;
    readiness: ReadinessChecks;
    /** How long one check of `readiness` answers the public /ready (default 1 s). */
    readinessShareMs?: number;
    /** The gateway's public origin: the document's server, and the landing answer's links. */
    publicOrigin: () => string;
    /** Where the console is deployed, when not at this gateway's own /console (HALLMARK_CONSOLE_URL). */
    consoleUrl?: string | undefined;
  },
): void {
  // Built and serialised once, on the first request: the origin is known only once the gateway
  // listens (PORT=0). Serialising its ~470 KB on every request took ~9 ms of the event loop each.
  let openApiDocument: SerialisedJson | undefined;

  registerRoute(app, landingRoute, async (): Promise<Landing> => {
    const origin = deps.publicOrigin();
    return {
      name: 'Hallmark API',
      openapi: `${origin}${openApiRoute.path}`,
      docs: `${origin}${openApiRoute.path} lists every operation; docs/API.md in the Hallmark repository explains the choices`,
      console: deps.consoleUrl ?? `${origin}/console`,
      jwks: `${origin}/.well-known/jwks.json`,
      health: `${origin}/health`,
    };
  });

  registerRoute(app, healthRoute, async () => ({ status: 'ok' }));

  // Public: checked once a second at most whoever asks, without the stores' error text (logged instead).
  const readiness = createSharedReadiness(deps.readiness, {
    ...(deps.readinessShareMs !== undefined ? { everyMs: deps.readinessShareMs } : {}),
    onFailure: (report) => app.log.warn({ checks: report.checks }, 'not ready: a dependency is not reachable'),
  });
  registerRoute(app, readyRoute, async () => {
    const report = await readiness();
    if (!report.ready) {
      throw new HallmarkError('SERVICE_UNAVAILABLE', 'A dependency is not reachable.', { checks: report.checks });
    }
    return { status: 'ready', checks: report.checks };
  });

  registerRoute(app, openApiRoute, async (request, reply) => {
    openApiDocument ??= serialiseJson(hallmarkOpenApiDocument(routes, deps.publicOrigin()));
    return sendSerialisedJson(request, reply, openApiDocument, 'public, max-age=300');
  });

  registerRoute(app, pingServiceRoute, async (request) => {
    const { service } = request.params as { service: BackendService };
    return deps.services.call(pingRpc(service), request.body as PingRequest, request.id);
  });
}
