import {
  type CodeDetail,
  codeNotFound,
  codeStatusRpc,
  getCodeRoute,
  getCodeRpc,
  type ListCodesQuery,
  listCodesRoute,
  listCodesRpc,
} from '@hallmark/contracts';
import type { FastifyInstance } from 'fastify';
import { refuseUnreachableGtin } from '../auth/key-restrictions.ts';
import { principalOf } from '../auth/request-auth.ts';
import { registerRoute } from '../route-registry.ts';
import type { ServiceCaller } from '../service-call.ts';

/**
 * GET /codes (code-service's `codes`, keyset-paged) and GET /codes/{assetId} (the code from
 * code-service, what verify-service knows of it: scans, reports, block). Always the caller's
 * account and environment: another account's code is NOT_FOUND, and so is a code of a GTIN the
 * calling key is not restricted to.
 */
export function registerCodeListingRoutes(app: FastifyInstance, deps: { services: ServiceCaller }): void {
  registerRoute(app, listCodesRoute, async (request) =>
    deps.services.call(listCodesRpc, { principal: principalOf(request), query: request.query as ListCodesQuery }, request.id),
  );

  registerRoute(app, getCodeRoute, async (request): Promise<CodeDetail> => {
    const principal = principalOf(request);
    const { assetId } = request.params as { assetId: string };
    const code = await deps.services.call(getCodeRpc, { principal, assetId }, request.id);
    // A key restricted to other GTINs finds it as it would another account's code.
    refuseUnreachableGtin(request, code.gtin, () => codeNotFound(assetId));
    const status = await deps.services.call(codeStatusRpc, { principal, gtin: code.gtin, serial: code.serialNumber }, request.id);
    return { ...code, ...status };
  });
}
