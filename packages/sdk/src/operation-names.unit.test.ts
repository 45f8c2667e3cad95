import { hallmarkOpenApiDocument, routes } from '@hallmark/contracts';
import { describe, expect, it } from 'vitest';
import { operationTable } from './generated/operations.ts';
import { Hallmark } from './index.ts';
import { methodsOf } from './operation-names.ts';

const documentOperationIds = () => {
  const document = hallmarkOpenApiDocument(routes, 'https://gateway.hallmark.invalid') as {
    paths: Record<string, Record<string, { operationId?: string }>>;
  };
  return Object.values(document.paths).flatMap((item) => Object.values(item).map((operation) => operation.operationId));
};

describe('one method per operation', () => {
  it('every operationId of the OpenAPI document has exactly one method on the client', () => {
    const methods = methodsOf();
    const byOperation = new Map<string, string[]>();
    for (const { name, operationId } of methods) byOperation.set(operationId, [...(byOperation.get(operationId) ?? []), name]);
    const missing = documentOperationIds().filter((id) => id !== undefined && !byOperation.has(id));
    expect(
      missing,
      `operations without a method: add them to packages/sdk/src/operation-names.ts (and run \`pnpm gen:sdk\`)`,
    ).toEqual([]);
    const twice = [...byOperation].filter(([, names]) => names.length > 1);
    expect(twice).toEqual([]);
    expect(new Set(methods.map((method) => method.operationId))).toEqual(new Set(documentOperationIds()));
  });

  it('every method is a function on a client, under its dotted name', () => {
    const client = new Hallmark({ baseUrl: 'http://127.0.0.1:9' });
    for (const { name, operationId } of methodsOf()) {
      const method = name.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], client);
      expect(typeof method, name).toBe('function');
      expect(operationTable[operationId], operationId).toBeDefined();
    }
  });
});
