import {
  type CreateSchemaBody,
  createSchemaRoute,
  createSchemaRpc,
  deleteSchemaRoute,
  deleteSchemaRpc,
  getSchemaRoute,
  getSchemaRpc,
  type ListSchemasQuery,
  listSchemasRoute,
  listSchemasRpc,
  type UpdateSchemaBody,
  updateSchemaRoute,
  updateSchemaRpc,
  validateMetadataRoute,
  validateMetadataRpc,
} from '@hallmark/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOf } from '../auth/request-auth.ts';
import { registerRoute } from '../route-registry.ts';
import type { ServiceCaller } from '../service-call.ts';

const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
const versionOf = (request: FastifyRequest) => (request.query as { version?: number }).version;

/** POST/GET /schemas, GET/PATCH/DELETE /schemas/{id}, POST /schemas/{id}/validate. */
export function registerSchemaRoutes(app: FastifyInstance, deps: { services: ServiceCaller }): void {
  registerRoute(app, createSchemaRoute, async (request, reply) => {
    const schema = await deps.services.call(
      createSchemaRpc,
      { principal: principalOf(request), body: request.body as CreateSchemaBody },
      request.id,
    );
    reply.status(201);
    return schema;
  });

  registerRoute(app, listSchemasRoute, async (request) =>
    deps.services.call(listSchemasRpc, { principal: principalOf(request), query: request.query as ListSchemasQuery }, request.id),
  );

  registerRoute(app, getSchemaRoute, async (request) => {
    const version = versionOf(request);
    return deps.services.call(
      getSchemaRpc,
      { principal: principalOf(request), id: idOf(request), ...(version ? { version } : {}) },
      request.id,
    );
  });

  registerRoute(app, updateSchemaRoute, async (request) =>
    deps.services.call(
      updateSchemaRpc,
      { principal: principalOf(request), id: idOf(request), body: request.body as UpdateSchemaBody },
      request.id,
    ),
  );

  registerRoute(app, deleteSchemaRoute, async (request, reply) => {
    await deps.services.call(deleteSchemaRpc, { principal: principalOf(request), id: idOf(request) }, request.id);
    reply.status(204);
    return reply.send();
  });

  registerRoute(app, validateMetadataRoute, async (request) => {
    const version = versionOf(request);
    return deps.services.call(
      validateMetadataRpc,
      { principal: principalOf(request), id: idOf(request), data: request.body, ...(version ? { version } : {}) },
      request.id,
    );
  });
}
