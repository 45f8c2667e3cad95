import { CreateAccountBody, CreateKeyBody, toRouterPath } from '@hallmark/contracts';
import { Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { createAllowedMethods } from './allowed-methods.ts';
import { fieldsOf, toApiError } from './error-envelope.ts';

// The gateway's body validator's options (app.ts createAjv).
const ajv = new Ajv({ allErrors: true, useDefaults: true, removeAdditional: false, strict: false, verbose: true });
addFormats.default(ajv);

function refusal(schema: object, value: unknown) {
  const validate = ajv.compile(schema);
  expect(validate(value)).toBe(false);
  return toApiError(Object.assign(new Error('invalid'), { validation: validate.errors, validationContext: 'body' }));
}

describe('validation errors for people', () => {
  it('lists an enum’s allowed values once, one message per field, with the field’s path', () => {
    const error = refusal(CreateAccountBody, { name: '', tier: 'gold', extra: 1 });
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details?.fields).toEqual([
      { field: 'extra', in: 'body', message: 'is not an accepted field' },
      { field: 'name', in: 'body', message: 'must not be empty' },
      { field: 'tier', in: 'body', message: 'must be one of: free, starter, enterprise' },
    ]);
    expect(error.message).toBe(
      'Invalid request: 3 fields: extra is not an accepted field; name must not be empty; tier must be one of: free, starter, enterprise.',
    );
  });

  it('says what a nested field needs, with its description, and a nullable type once', () => {
    const schema = Type.Object({
      items: Type.Array(
        Type.Object({
          gtin: Type.String({ pattern: '^[0-9]{14}$', description: 'a GTIN-14' }),
          note: Type.Union([Type.String(), Type.Null()]),
        }),
      ),
    });
    expect(refusal(schema, { items: [{ gtin: '12', note: 5 }] }).details?.fields).toEqual([
      { field: 'items.0.gtin', in: 'body', message: 'must match the pattern ^[0-9]{14}$ (a GTIN-14)' },
      { field: 'items.0.note', in: 'body', message: 'must be a string or null' },
    ]);
  });

  it('answers a POST /keys body by the form it takes, without the if/then wrapper', () => {
    const error = refusal(CreateKeyBody, { name: 'k', scopes: ['nope'] });
    expect(error.details?.fields).toEqual([
      {
        field: 'scopes.0',
        in: 'body',
        message: expect.stringMatching(/^must be one of: \*, assets:create, .*accounts:write$/),
      },
    ]);
    expect(error.message).toMatch(/^Invalid request: scopes\.0 must be one of: \*, assets:create/);
  });

  it('names the part when the value itself is refused', () => {
    expect(fieldsOf([{ instancePath: '', keyword: 'type', params: { type: 'object' } }], 'querystring')).toEqual([
      { field: 'querystring', in: 'querystring', message: 'must be an object' },
    ]);
  });
});

describe('allowed methods (405)', () => {
  const allowed = createAllowedMethods([
    { path: '/api/v1/keys', method: 'GET' },
    { path: '/api/v1/keys', method: 'POST' },
    { path: '/api/v1/keys/{id}/revoke', method: 'POST' },
    { path: '/01/{linkPath}', method: 'GET', catchAll: true },
  ] as never);

  it('lists the methods of a known path, HEAD with GET', () => {
    expect(allowed('/api/v1/keys')).toEqual(['GET', 'HEAD', 'POST']);
    expect(allowed('/api/v1/keys/key_1/revoke')).toEqual(['POST']);
    expect(allowed('/01/09506000134352/21/abc')).toEqual(['GET', 'HEAD']);
  });

  it('knows no method for an unknown path', () => {
    expect(allowed('/api/v1/nothing')).toEqual([]);
    expect(allowed('/api/v1/keys/key_1')).toEqual([]);
    expect(toRouterPath('/api/v1/keys/{id}')).toBe('/api/v1/keys/:id');
  });
});
