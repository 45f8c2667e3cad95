import * as contracts from '@hallmark/contracts';
import type { TSchema } from '@sinclair/typebox';
import { FormatRegistry } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { describe, expect, it } from 'vitest';
import { isDateTime, registerContractFormats } from './typebox-formats.ts';

/** Every `format` named anywhere inside a schema. */
function formatsIn(schema: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const item of schema) formatsIn(item, found);
  else if (schema && typeof schema === 'object') {
    const node = schema as Record<string, unknown>;
    if (typeof node.format === 'string') found.add(node.format);
    for (const value of Object.values(node)) formatsIn(value, found);
  }
  return found;
}

const rpcDefinitions = (Object.values(contracts) as unknown[]).filter(
  (value): value is { operation: string; request: TSchema } =>
    !!value && typeof value === 'object' && 'operation' in value && 'request' in value && 'service' in value,
);

describe('string formats at the bus', () => {
  it('knows every format an RPC request of the contracts names', () => {
    registerContractFormats();
    expect(rpcDefinitions.length).toBeGreaterThan(20);
    const named = new Set(rpcDefinitions.flatMap((rpc) => [...formatsIn(rpc.request)]));
    expect(named).toContain('date-time');
    for (const format of named) expect(FormatRegistry.Has(format), format).toBe(true);
  });

  it('accepts RFC 3339 date-times and refuses the rest', () => {
    for (const good of ['2026-11-28T12:00:00Z', '2026-11-28T12:00:00.123+01:00', '2024-02-29t23:59:59z', '2026-01-01 00:00:00Z'])
      expect(isDateTime(good), good).toBe(true);
    for (const bad of [
      '2026-11-28',
      '2026-11-28T12:00:00',
      '2026-02-30T00:00:00Z',
      '2026-13-01T00:00:00Z',
      'yesterday',
      '2026-11-28T24:00:00Z',
      '2016-12-31T23:59:60Z',
      '',
    ])
      expect(isDateTime(bad), bad).toBe(false);
  });

  it('lets the replay of failed webhook messages through the bus check with a date-time, and still refuses a bad one', () => {
    registerContractFormats();
    const checker = TypeCompiler.Compile(contracts.replayFailedWebhookMessagesRpc.request);
    const request = (since: string) => ({
      principal: { accountId: 'a', environment: 'live', scopes: ['*'] },
      id: 'endpoint',
      body: { since },
    });
    const ok = request('2026-11-28T12:00:00Z');
    const errors = [...checker.Errors(ok)].map((error) => `${error.path}: ${error.message}`);
    expect(errors.filter((error) => error.includes('format'))).toEqual([]);
    expect([...checker.Errors(request('not a time'))].some((error) => error.path === '/body/since')).toBe(true);
  });
});
