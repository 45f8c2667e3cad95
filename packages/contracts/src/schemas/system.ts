import { type Static, Type } from '@sinclair/typebox';
import { backendServices } from '../services.ts';

export const HealthResponse = Type.Object({ status: Type.Literal('ok') });
export type HealthResponse = Static<typeof HealthResponse>;

export const DependencyCheck = Type.Object({
  ok: Type.Boolean(),
  latencyMs: Type.Number(),
  error: Type.Optional(Type.String()),
});

export const ReadyResponse = Type.Object({
  status: Type.Literal('ready'),
  checks: Type.Record(Type.String(), DependencyCheck),
});
export type ReadyResponse = Static<typeof ReadyResponse>;

export const ServiceNameParam = Type.Object({
  service: Type.Union(backendServices.map((name) => Type.Literal(name))),
});

export const PingRequest = Type.Object(
  {
    /** Diagnostic: hold the reply this long, to observe draining and timeouts. */
    delayMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 2000 })),
  },
  { additionalProperties: false },
);
export type PingRequest = Static<typeof PingRequest>;

export const PingResponse = Type.Object({
  service: Type.String(),
  instance: Type.String(),
  requestId: Type.String(),
  receivedAt: Type.String({ format: 'date-time' }),
});
export type PingResponse = Static<typeof PingResponse>;

/** GET /: where a person or a client finds the rest. */
export const Landing = Type.Object({
  name: Type.Literal('Hallmark API'),
  openapi: Type.String({ description: 'the OpenAPI 3.1 document', examples: ['https://id.example.com/api/v1/openapi.json'] }),
  docs: Type.String({
    description: 'where the API is described for people',
    examples: ['docs/API.md in the Hallmark repository; every operation is in the OpenAPI document'],
  }),
  console: Type.String({
    format: 'uri',
    description: 'the web console: this gateway’s own /console, or HALLMARK_CONSOLE_URL where it is deployed elsewhere',
    examples: ['https://id.example.com/console'],
  }),
  jwks: Type.String({
    description: 'the public keys, for offline verification',
    examples: ['https://id.example.com/.well-known/jwks.json'],
  }),
  health: Type.String({ examples: ['https://id.example.com/health'] }),
});
export type Landing = Static<typeof Landing>;
