import { Type } from '@sinclair/typebox';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { errorStatus } from './error-codes.ts';
import { defineRoute, type RouteDefinition } from './http-route.ts';
import { buildOpenApiDocument, hallmarkOpenApiDocument, openApiTags } from './openapi.ts';
import { routes } from './routes.ts';
import { exampleOf, fromPattern, NoExampleError } from './schema-example.ts';

type MediaType = { schema: Record<string, unknown>; example?: unknown };
type Operation = {
  operationId?: string;
  summary?: string;
  tags?: string[];
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, { content?: Record<string, MediaType> }>;
};

/**
 * What every operation must have for the document to serve client generators and readers: the
 * route's name, so a new route that lacks one fails here by name.
 */
function completenessProblems(route: RouteDefinition): string[] {
  const problems: string[] = [];
  const name = `${route.method} ${route.path}`;
  if (!/^[a-z][A-Za-z0-9]+$/.test(route.operationId)) problems.push(`${name}: operationId must be camelCase`);
  if (route.summary.trim().length < 10) problems.push(`${name}: needs a summary`);
  if (route.tags.length === 0) problems.push(`${name}: needs a tag`);
  for (const tag of route.tags) if (!openApiTags[tag]) problems.push(`${name}: tag ${tag} is not described in openApiTags`);
  let operation: Operation | undefined;
  try {
    const document = buildOpenApiDocument([route], { title: 't', version: '1' }) as {
      paths: Record<string, Record<string, Operation>>;
    };
    operation = document.paths[route.path]?.[route.method.toLowerCase()];
  } catch (error) {
    problems.push(`${name}: ${error instanceof NoExampleError ? error.message : String(error)}`);
    return problems;
  }
  const bodies: Array<[string, MediaType]> = [
    ...Object.entries(operation?.requestBody?.content ?? {}).map(
      ([type, media]) => [`request ${type}`, media] as [string, MediaType],
    ),
    ...Object.entries(operation?.responses ?? {}).flatMap(([status, response]) =>
      Object.entries(response.content ?? {}).map(([type, media]) => [`${status} ${type}`, media] as [string, MediaType]),
    ),
  ];
  for (const [where, media] of bodies) {
    if (media.schema.contentEncoding === 'binary') continue;
    if (media.example === undefined) {
      problems.push(`${name}: ${where} has no example`);
      continue;
    }
    if (media.schema.$ref) continue; // the error envelope: checked once below
    const validate = ajv.compile(media.schema);
    if (!validate(media.example))
      problems.push(`${name}: ${where} example does not match its schema: ${ajv.errorsText(validate.errors)}`);
  }
  return problems;
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

describe('buildOpenApiDocument', () => {
  const document = buildOpenApiDocument(routes, { title: 'Hallmark API', version: '1.0.0' }) as {
    openapi: string;
    paths: Record<
      string,
      Record<
        string,
        {
          operationId: string;
          responses: Record<string, unknown>;
          requestBody?: { required: boolean };
          parameters: Array<{ name: string; in: string }>;
        }
      >
    >;
  };

  it('is OpenAPI 3.1 with one operation per route and unique operation ids', () => {
    expect(document.openapi).toBe('3.1.0');
    const operations = Object.values(document.paths).flatMap((path) => Object.values(path));
    expect(operations).toHaveLength(routes.length);
    expect(new Set(operations.map((operation) => operation.operationId)).size).toBe(routes.length);
  });

  it('documents each route’s errors under their statuses, with the body-related ones on routes with a body', () => {
    const ping = document.paths['/api/v1/system/ping/{service}']?.post;
    expect(Object.keys(ping?.responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '404', '413', '415', '500', '503']));
    expect(ping?.requestBody?.required).toBe(false);
    const health = document.paths['/health']?.get;
    expect(Object.keys(health?.responses ?? {})).not.toContain('413');
  });

  it('declares every parameter of every path template, as OpenAPI requires', () => {
    for (const [path, operations] of Object.entries(document.paths)) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      for (const operation of Object.values(operations)) {
        const declared = operation.parameters.filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name);
        expect(declared.sort(), path).toEqual([...names].sort());
      }
    }
  });

  it('gives every operation an operationId, summary, described tags, and a valid example for every body', () => {
    expect(routes.flatMap((route) => completenessProblems(route))).toEqual([]);
  });

  it('names the route that lacks a summary or an example, and the schema an example cannot be made for', () => {
    const bare = defineRoute({
      operationId: 'makeWidget',
      method: 'POST',
      path: '/api/v1/widgets',
      summary: '',
      tags: ['widgets'],
      auth: 'public',
      body: Type.Object({ code: Type.String({ pattern: '^(a|b)$' }) }),
      responses: { 200: { description: 'ok', schema: Type.Object({ id: Type.String() }) } },
      errors: [],
    });
    const problems = completenessProblems(bare);
    expect(problems).toEqual([
      'POST /api/v1/widgets: needs a summary',
      'POST /api/v1/widgets: tag widgets is not described in openApiTags',
      expect.stringMatching(/^POST \/api\/v1\/widgets: No example can be made for #\/properties\/code: the pattern/),
    ]);
    const wrongExample = completenessProblems({
      ...bare,
      summary: 'Make a widget from a code.',
      tags: ['system'],
      examples: { body: { code: 'c' } },
    });
    expect(wrongExample).toEqual([expect.stringContaining('request application/json example does not match its schema')]);
  });

  it('makes examples that match their schemas from types, formats, bounds and simple patterns', () => {
    expect(fromPattern('^[0-9]{14}$')).toBe('00000000000000');
    expect(fromPattern('^#[0-9A-Fa-f]{6}$')).toBe('#aaaaaa');
    expect(fromPattern('^[a-zA-Z]{2}(-[a-zA-Z]{2})?$')).toBe('aa');
    expect(fromPattern('^[0-9a-f]{64}\\.png$')).toBe(`${'a'.repeat(64)}.png`);
    expect(fromPattern('^(a|b)$')).toBeUndefined();
    const schema = Type.Object({
      at: Type.String({ format: 'date-time' }),
      count: Type.Integer({ minimum: 5, maximum: 9 }),
      kind: Type.Union([Type.Literal('x'), Type.Literal('y')]),
      maybe: Type.Union([Type.Null(), Type.String({ minLength: 3 })]),
      given: Type.String({ examples: ['mine'] }),
    });
    const example = exampleOf(JSON.parse(JSON.stringify(schema)));
    expect(example).toEqual({ at: '2026-01-15T09:30:00.000Z', count: 5, kind: 'x', maybe: 'example', given: 'mine' });
    expect(ajv.validate(JSON.parse(JSON.stringify(schema)), example)).toBe(true);
  });

  it('answers every error with the envelope, and its examples are envelopes', () => {
    const served = hallmarkOpenApiDocument(routes, 'https://gateway.hallmark.invalid') as {
      components: { schemas: { ErrorEnvelope: Record<string, unknown> } };
      paths: Record<string, Record<string, Operation>>;
    };
    const envelope = ajv.compile(served.components.schemas.ErrorEnvelope);
    for (const [path, operations] of Object.entries(served.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          if (Number(status) < 400 || response.content?.['application/json'] === undefined) continue;
          const media = response.content['application/json'];
          expect(media.schema, `${method} ${path} ${status}`).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
          expect(envelope(media.example), `${method} ${path} ${status}`).toBe(true);
        }
      }
    }
  });

  it('names its servers, licence and contact', () => {
    const served = hallmarkOpenApiDocument(routes, 'https://id.brand.test') as {
      servers: Array<{ url: string }>;
      info: { license: { name: string }; contact: { url: string } };
    };
    expect(served.servers[0]?.url).toBe('https://id.brand.test');
    expect(served.info.license.name).toBeTruthy();
    expect(served.info.contact.url).toBe('https://id.brand.test/');
  });

  it('maps every error code to an HTTP error status', () => {
    for (const status of Object.values(errorStatus)) expect(status).toBeGreaterThanOrEqual(400);
  });
});
