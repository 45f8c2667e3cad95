import { Type } from '@sinclair/typebox';
import { defineRoute } from './http-route.ts';
import { HealthResponse, PingRequest, PingResponse, ReadyResponse, ServiceNameParam } from './schemas/system.ts';

export const apiPrefix = '/api/v1';

export const healthRoute = defineRoute({
  operationId: 'getHealth',
  method: 'GET',
  path: '/health',
  summary: 'Liveness: the process is up and serving.',
  tags: ['system'],
  auth: 'public',
  responses: { 200: { description: 'Alive', schema: HealthResponse } },
  errors: [],
});

export const readyRoute = defineRoute({
  operationId: 'getReady',
  method: 'GET',
  path: '/ready',
  summary: 'Readiness: every dependency this process needs is reachable.',
  tags: ['system'],
  auth: 'public',
  responses: { 200: { description: 'Ready', schema: ReadyResponse } },
  errors: ['SERVICE_UNAVAILABLE'],
});

export const openApiRoute = defineRoute({
  operationId: 'getOpenApiDocument',
  method: 'GET',
  path: `${apiPrefix}/openapi.json`,
  summary: 'This OpenAPI 3.1 document.',
  tags: ['system'],
  auth: 'public',
  responses: { 200: { description: 'The OpenAPI document', schema: Type.Object({}, { additionalProperties: true }) } },
  errors: [],
});

export const pingServiceRoute = defineRoute({
  operationId: 'pingService',
  method: 'POST',
  path: `${apiPrefix}/system/ping/{service}`,
  summary: 'Round trip gateway → bus → service → gateway; names the replica that answered.',
  tags: ['system'],
  auth: 'public',
  params: ServiceNameParam,
  body: PingRequest,
  bodyOptional: true,
  responses: { 200: { description: 'The service answered', schema: PingResponse } },
  errors: ['VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
});

/** Every HTTP route of the product. A route that is not here is not served. */
export const routes = [healthRoute, readyRoute, openApiRoute, pingServiceRoute] as const;
