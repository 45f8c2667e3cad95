import * as contracts from '@hallmark/contracts';
import type { TSchema } from '@sinclair/typebox';
import { FormatRegistry } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { isDateTime, parseDateTime, registerContractFormats } from './typebox-formats.ts';

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

  it('accepts the date-times Ajv accepts, as the instants they name, and refuses the rest', () => {
    const instants: Record<string, string> = {
      '2026-11-28T12:00:00Z': '2026-11-28T12:00:00.000Z',
      '2026-11-28T12:00:00.123+01:00': '2026-11-28T11:00:00.123Z',
      '2026-11-28T12:00:00+0100': '2026-11-28T11:00:00.000Z',
      '2026-11-28T12:00:00-05': '2026-11-28T17:00:00.000Z',
      '2024-02-29t23:59:59z': '2024-02-29T23:59:59.000Z',
      '2026-01-01 00:00:00Z': '2026-01-01T00:00:00.000Z',
      '2026-01-01\t00:00:00Z': '2026-01-01T00:00:00.000Z',
    };
    for (const [text, instant] of Object.entries(instants)) {
      expect(isDateTime(text), text).toBe(true);
      expect(parseDateTime(text)?.toISOString(), text).toBe(instant);
    }
    const bad = ['2026-11-28', '2026-11-28T12:00:00', '2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z', 'yesterday'];
    bad.push('2026-11-28T24:00:00Z', '2016-12-31T23:59:60Z', '2026-11-28T12:00:00+1', '2026-11-28T12:00Z', '');
    for (const text of bad) {
      expect(isDateTime(text), text).toBe(false);
      expect(parseDateTime(text), text).toBeUndefined();
    }
  });

  it('agrees with Ajv (ajv-formats, as the gateway sets it up) on every date-time, but the leap second', () => {
    const ajv = new Ajv();
    addFormats.default(ajv);
    const check = ajv.compile({ type: 'string', format: 'date-time' });
    const samples = ['2026-11-28T12:00:00Z', '2026-11-28T12:00:00+0100', '2026-11-28T12:00:00-05', '2026-01-01 00:00:00Z'];
    samples.push('2026-11-28T12:00:00', '2026-02-30T00:00:00Z', '2026-11-28', 'x', '2026-11-28T12:00:00.5+01:00');
    for (const sample of samples) expect(isDateTime(sample), sample).toBe(check(sample));
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
