import { describe, expect, it } from 'vitest';
import { errorStatus } from './error-codes.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { routes } from './routes.ts';

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

  it('maps every error code to an HTTP error status', () => {
    for (const status of Object.values(errorStatus)) expect(status).toBeGreaterThanOrEqual(400);
  });
});
