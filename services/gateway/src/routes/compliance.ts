import { Readable } from 'node:stream';
import {
  type ComplianceConfigPatch,
  complianceExportRoute,
  exportPageRpc,
  getComplianceConfigRoute,
  getComplianceConfigRpc,
  merkleConsistencyRoute,
  merkleConsistencyRpc,
  merkleProofRoute,
  merkleProofRpc,
  merkleRootRoute,
  merkleRootRpc,
  updateComplianceConfigRoute,
  updateComplianceConfigRpc,
  verifyChainRoute,
  verifyChainRpc,
} from '@hallmark/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOf } from '../auth/request-auth.ts';
import { registerRoute } from '../route-registry.ts';
import type { ServiceCaller } from '../service-call.ts';
import { exportStream } from './compliance-export.ts';
import { withRetryAfter } from './retry-after.ts';

const contentTypes = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  epcis: 'application/ld+json; charset=utf-8',
} as const;

const assetIdOf = (request: FastifyRequest) => (request.params as { assetId: string }).assetId;

/** GET /compliance/{assetId}/verify, …/merkle/root|proof|consistency, …/export; GET/PATCH /compliance/config. */
export function registerComplianceRoutes(app: FastifyInstance, deps: { services: ServiceCaller; clock: () => Date }): void {
  // Reads wait for the Merkle projection to hold every stored event (read your writes); past
  // HALLMARK_PROJECTION_WAIT_MS compliance-service answers 503, with Retry-After set here.
  registerRoute(app, verifyChainRoute, async (request, reply) =>
    withRetryAfter(reply, () =>
      deps.services.call(verifyChainRpc, { principal: principalOf(request), assetId: assetIdOf(request) }, request.id),
    ),
  );

  registerRoute(app, merkleRootRoute, async (request, reply) =>
    withRetryAfter(reply, () =>
      deps.services.call(merkleRootRpc, { principal: principalOf(request), assetId: assetIdOf(request) }, request.id),
    ),
  );

  registerRoute(app, merkleProofRoute, async (request, reply) => {
    const { eventId } = request.query as { eventId: string };
    return withRetryAfter(reply, () =>
      deps.services.call(merkleProofRpc, { principal: principalOf(request), assetId: assetIdOf(request), eventId }, request.id),
    );
  });

  registerRoute(app, merkleConsistencyRoute, async (request, reply) => {
    const { from, to } = request.query as { from: number; to?: number };
    return withRetryAfter(reply, () =>
      deps.services.call(
        merkleConsistencyRpc,
        { principal: principalOf(request), assetId: assetIdOf(request), from, ...(to !== undefined ? { to } : {}) },
        request.id,
      ),
    );
  });

  registerRoute(app, complianceExportRoute, async (request, reply) => {
    const principal = principalOf(request);
    const assetId = assetIdOf(request);
    const requested = (request.query as { format?: 'json' | 'csv' | 'epcis' }).format;
    const format =
      requested ?? (await deps.services.call(getComplianceConfigRpc, { principal }, request.id)).config.defaultExportFormat;
    // The first page is fetched before any byte is sent, so an unknown asset is still a clean 404.
    const first = await withRetryAfter(reply, () =>
      deps.services.call(exportPageRpc, { principal, assetId, fromLeafIndex: 0 }, request.id),
    );
    const nextPage = (fromLeafIndex: number) =>
      deps.services.call(exportPageRpc, { principal, assetId, treeSize: first.treeSize, fromLeafIndex }, request.id);
    const fileName = `${first.assetId}-${first.treeSize}.${format === 'epcis' ? 'jsonld' : format}`;
    reply.header('content-type', contentTypes[format]).header('content-disposition', `attachment; filename="${fileName}"`);
    // HEAD: the GET's status and headers, from its first page, and no export behind them (Node drops
    // a HEAD's body as it is written, so nothing would pace the pages: each HEAD read the asset's whole
    // history at the database's speed).
    if (request.method === 'HEAD') return reply.send(Readable.from([]));
    return reply.send(exportStream(first, nextPage, format, deps.clock().toISOString()));
  });

  registerRoute(app, getComplianceConfigRoute, async (request) =>
    deps.services.call(getComplianceConfigRpc, { principal: principalOf(request) }, request.id),
  );

  registerRoute(app, updateComplianceConfigRoute, async (request) =>
    deps.services.call(
      updateComplianceConfigRpc,
      { principal: principalOf(request), patch: request.body as ComplianceConfigPatch },
      request.id,
    ),
  );
}
