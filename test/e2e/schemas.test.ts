import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';

let t: TestProduct;
let brand: string;
let other: string;

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
const api = <T = Record<string, any>>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(t.url, method, `/api/v1${path}`, options);

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

const perfume = {
  name: 'Perfume bottle',
  vertical: 'luxury',
  fields: [
    { name: 'name', type: 'string', required: true },
    { name: 'volumeMl', type: 'integer', required: true },
    { name: 'notes', type: 'array', items: 'string' },
    { name: 'launch', type: 'date' },
    { name: 'box', type: 'object', fields: [{ name: 'colour', type: 'string', required: true }] },
  ],
};

beforeAll(async () => {
  t = await startTestProduct();
  const operator = t.product.generatedOperatorKey as string;
  const account = async (name: string) => {
    const created = await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } });
    return { id: created.body.account.id as string, key: created.body.apiKey.secret as string };
  };
  const brandAccount = await account('Schema brand');
  brand = brandAccount.key;
  // The brand owns the GTIN it signs for (docs/SIGNING.md).
  await api('POST', `/accounts/${brandAccount.id}/gtins`, { key: operator, body: { gtin: '09506000134352' } });
  const otherAccount = await account('Other brand');
  other = otherAccount.key;
  await api('POST', `/accounts/${otherAccount.id}/gtins`, { key: operator, body: { gtin: '09506000134369' } });
});

afterAll(async () => {
  await t?.stop();
});

describe('metadata schemas', () => {
  it('creates a schema (201, version 1) and reads it back', async () => {
    const created = await api('POST', '/schemas', { key: brand, body: perfume });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^sch_/),
      name: 'Perfume bottle',
      vertical: 'luxury',
      version: 1,
      template: false,
    });
    const read = await api('GET', `/schemas/${created.body.id}`, { key: brand });
    expect(read.body).toEqual(created.body);
  });

  it('refuses a bad definition, naming each bad field', async () => {
    const bad = await api('POST', '/schemas', {
      key: brand,
      body: {
        name: 'Bad',
        vertical: 'luxury',
        fields: [
          { name: 'a', type: 'string' },
          { name: 'a', type: 'number' },
          { name: 'b', type: 'colour' },
          { name: 'c', type: 'string', items: 'string' },
          { name: 'd', type: 'object', fields: [{ name: 'e', type: 'vector' }] },
        ],
      },
    });
    expectError(bad, 400, 'VALIDATION_ERROR');
    expect(((bad.body.error?.details?.fields ?? []) as Array<{ field: string }>).map((field) => field.field)).toEqual([
      'fields.a',
      'fields.b',
      'fields.c',
      'fields.d.e',
    ]);
    expectError(
      await api('POST', '/schemas', { key: brand, body: { name: 'No fields', vertical: 'luxury' } }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await api('POST', '/schemas', { key: brand, body: { ...perfume, vertical: 'Not A Slug' } }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('validates data with readable errors and nested paths', async () => {
    const { id } = (await api('POST', '/schemas', { key: brand, body: perfume })).body;
    const good = await api('POST', `/schemas/${id}/validate`, {
      key: brand,
      body: { name: 'N°5', volumeMl: 50, notes: ['rose'], box: { colour: 'black' } },
    });
    expect(good.body).toEqual({ isValid: true, errors: [], errorsTruncated: false, schemaId: id, version: 1 });
    const bad = await api('POST', `/schemas/${id}/validate`, {
      key: brand,
      body: { volumeMl: 50.5, launch: 'spring', box: {}, extra: 1 },
    });
    expect(bad.body.isValid).toBe(false);
    expect(bad.body.errors).toEqual(
      expect.arrayContaining([
        { field: 'name', message: 'is required' },
        { field: 'volumeMl', message: 'must be a whole number' },
        { field: 'launch', message: 'must be an ISO 8601 date (YYYY-MM-DD) or date-time' },
        { field: 'box.colour', message: 'is required' },
        { field: 'extra', message: 'is not in the schema' },
      ]),
    );
  });

  it('bounds what a check of data with thousands of errors costs and answers: validate, generate and a batch', async () => {
    const box = (name: string) => ({ name, type: 'string', required: true });
    const manyBoxes = {
      name: 'Crates',
      vertical: 'logistics',
      fields: [{ name: 'items', type: 'array', items: 'object', fields: ['a', 'b', 'c', 'd', 'e'].map(box) }],
    };
    const { id } = (await api('POST', '/schemas', { key: brand, body: manyBoxes })).body;
    // 5,400 empty objects in 16 KiB: 27,000 errors. Only the first is looked for, as the data could hold more than 10,000.
    const crowded = { items: Array.from({ length: 5_400 }, () => ({})) };
    // The embedded product shares this process's event loop: a check that holds it shows here.
    let longestStallMs = 0;
    let last = performance.now();
    const watch = setInterval(() => {
      const now = performance.now();
      longestStallMs = Math.max(longestStallMs, now - last - 5);
      last = now;
    }, 5);
    try {
      const checked = await api('POST', `/schemas/${id}/validate`, { key: brand, body: crowded });
      expect(checked.status, JSON.stringify(checked.body).slice(0, 300)).toBe(200);
      expect(checked.body).toMatchObject({ isValid: false, errorsTruncated: true });
      expect(checked.body.errors).toEqual([{ field: 'items[0].a', message: 'is required' }]);
      // Fewer values: every error is looked for, the first 100 listed.
      const some = await api('POST', `/schemas/${id}/validate`, {
        key: brand,
        body: { items: Array.from({ length: 300 }, () => ({})) },
      });
      expect(some.body).toMatchObject({ isValid: false, errorsTruncated: true });
      expect(some.body.errors).toHaveLength(100);
      expect(some.body.errors.slice(0, 6).map((error: { field: string }) => error.field)).toEqual([
        'items[0].a',
        'items[0].b',
        'items[0].c',
        'items[0].d',
        'items[0].e',
        'items[1].a',
      ]);
      const few = await api('POST', `/schemas/${id}/validate`, { key: brand, body: { items: [{ a: 'x' }] } });
      expect(few.body).toMatchObject({ isValid: false, errorsTruncated: false });
      expect(few.body.errors).toHaveLength(4);

      const body = { gtin: '09506000134352', schemaId: id, metadata: { items: Array.from({ length: 300 }, () => ({})) } };
      const refused = await api('POST', '/code/generate', { key: brand, body: { ...body, serialNumber: `MANY-${Date.now()}` } });
      expectError(refused, 400, 'VALIDATION_ERROR');
      expect(refused.body.error?.details).toMatchObject({ schemaId: id, errorsTruncated: true });
      expect(refused.body.error?.details?.errors).toHaveLength(10);
      const batch = await api('POST', '/code/generate/batch', {
        key: brand,
        body: {
          items: Array.from({ length: 20 }, (_, index) => ({ ...body, metadata: crowded, serialNumber: `MANY-B${index}` })),
        },
      });
      expect(batch.status).toBe(200);
      expect(batch.body.results).toHaveLength(20);
      for (const result of batch.body.results) expect(result.error?.details?.errorsTruncated).toBe(true);
      expect(JSON.stringify(batch.body).length).toBeLessThan(100_000);
    } finally {
      clearInterval(watch);
    }
    // Before the bounds: over a second for the batch (and 10 s for the 990 KB body below).
    expect(longestStallMs).toBeLessThan(500);

    // Data larger than any code's metadata may be is refused before it is checked. Its body is made
    // here, outside the watch above: making 330,000 objects in this process is this test's own work.
    const huge = await api('POST', `/schemas/${id}/validate`, {
      key: brand,
      body: { items: Array.from({ length: 330_000 }, () => ({})) },
    });
    expectError(huge, 400, 'VALIDATION_ERROR');
    expect(JSON.stringify(huge.body).length).toBeLessThan(2_000);
  });

  it('bumps the version on PATCH and keeps earlier versions readable and usable', async () => {
    const { id } = (await api('POST', '/schemas', { key: brand, body: perfume })).body;
    const patched = await api('PATCH', `/schemas/${id}`, {
      key: brand,
      body: { fields: [...perfume.fields, { name: 'batchSize', type: 'integer', required: true }] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ version: 2, name: 'Perfume bottle' });
    expect((await api('GET', `/schemas/${id}?version=1`, { key: brand })).body.fields).toHaveLength(5);
    expect((await api('GET', `/schemas/${id}`, { key: brand })).body.fields).toHaveLength(6);
    const data = { name: 'x', volumeMl: 30 };
    expect((await api('POST', `/schemas/${id}/validate?version=1`, { key: brand, body: data })).body.isValid).toBe(true);
    expect((await api('POST', `/schemas/${id}/validate`, { key: brand, body: data })).body.isValid).toBe(false);
    expectError(await api('GET', `/schemas/${id}?version=9`, { key: brand }), 404, 'NOT_FOUND');
    expectError(await api('PATCH', `/schemas/${id}`, { key: brand, body: {} }), 400, 'VALIDATION_ERROR');
    expectError(
      await api('PATCH', `/schemas/${id}`, { key: brand, body: { fields: [{ name: 'x', type: 'nope' }] } }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('lists the account’s schemas with a cursor and a vertical filter', async () => {
    for (let i = 0; i < 3; i++)
      await api('POST', '/schemas', { key: other, body: { ...perfume, name: `S${i}`, vertical: 'cosmetics' } });
    await api('POST', '/schemas', { key: other, body: { ...perfume, vertical: 'watches' } });
    const first = await api('GET', '/schemas?vertical=cosmetics&limit=2', { key: other });
    expect(first.body.schemas.map((schema: { name: string }) => schema.name)).toEqual(['S2', 'S1']);
    expect(first.body.pagination.hasMore).toBe(true);
    const second = await api('GET', `/schemas?vertical=cosmetics&limit=2&cursor=${first.body.pagination.nextCursor}`, {
      key: other,
    });
    expect(second.body.schemas.map((schema: { name: string }) => schema.name)).toEqual(['S0']);
    expect((await api('GET', '/schemas', { key: other })).body.schemas).toHaveLength(4);
    // An empty filter is refused, as every other list's text filters are (it had listed nothing).
    expectError(await api('GET', '/schemas?vertical=', { key: other }), 400, 'VALIDATION_ERROR');
  });

  it('answers 404 for another account’s schema', async () => {
    const { id } = (await api('POST', '/schemas', { key: brand, body: perfume })).body;
    expectError(await api('GET', `/schemas/${id}`, { key: other }), 404, 'NOT_FOUND');
    expectError(await api('POST', `/schemas/${id}/validate`, { key: other, body: {} }), 404, 'NOT_FOUND');
    expectError(await api('DELETE', `/schemas/${id}`, { key: other }), 404, 'NOT_FOUND');
    expect((await api('GET', `/schemas/${id}`, { key: brand })).status).toBe(200);
  });

  it('offers read-only templates for three verticals, to copy', async () => {
    const templates = await api('GET', '/schemas?templates=true', { key: brand });
    expect(templates.body.schemas.map((schema: { vertical: string }) => schema.vertical).sort()).toEqual([
      'luxury',
      'pharmaceuticals',
      'wine-spirits',
    ]);
    const dscsa = await api('GET', '/schemas/tpl_pharma_dscsa', { key: brand });
    expect(dscsa.body).toMatchObject({ template: true, version: 1 });
    expectError(await api('PATCH', '/schemas/tpl_pharma_dscsa', { key: brand, body: { name: 'mine' } }), 409, 'CONFLICT');
    expectError(await api('DELETE', '/schemas/tpl_pharma_dscsa', { key: brand }), 409, 'CONFLICT');
    const copy = await api('POST', '/schemas', { key: brand, body: { copyFrom: 'tpl_wine_spirits', name: 'Our wines' } });
    expect(copy.status).toBe(201);
    expect(copy.body).toMatchObject({ name: 'Our wines', vertical: 'wine-spirits', template: false, version: 1 });
    expectError(await api('POST', '/schemas', { key: brand, body: { copyFrom: 'tpl_nothing' } }), 400, 'VALIDATION_ERROR');
  });

  it('refuses generation when metadata does not match the schema, with the same errors list', async () => {
    const { id } = (await api('POST', '/schemas', { key: brand, body: perfume })).body;
    const body = { gtin: '09506000134352', serialNumber: `SCH-${Date.now()}`, schemaId: id };
    const refused = await api('POST', '/code/generate', {
      key: brand,
      body: { ...body, metadata: { name: 'x', volumeMl: 'fifty' } },
    });
    expectError(refused, 400, 'VALIDATION_ERROR');
    expect(refused.body.error?.details).toMatchObject({
      schemaId: id,
      schemaVersion: 1,
      errors: [{ field: 'volumeMl', message: 'must be a whole number' }],
    });
    expect(
      (await api('POST', '/code/generate', { key: brand, body: { ...body, metadata: { name: 'x', volumeMl: 50 } } })).status,
    ).toBe(201);
    expectError(
      await api('POST', '/code/generate', {
        key: other,
        // Its own GTIN: another account's schema is not there for it.
        body: { ...body, gtin: '09506000134369', serialNumber: 'OTHER-1', metadata: { name: 'x', volumeMl: 50 } },
      }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('deletes with 204, after which the schema is gone and cannot be used to generate', async () => {
    const { id } = (await api('POST', '/schemas', { key: brand, body: perfume })).body;
    const deleted = await api('DELETE', `/schemas/${id}`, { key: brand });
    expect(deleted.status).toBe(204);
    expectError(await api('GET', `/schemas/${id}`, { key: brand }), 404, 'NOT_FOUND');
    const refused = await api('POST', '/code/generate', {
      key: brand,
      body: { gtin: '09506000134352', serialNumber: `DEL-${Date.now()}`, schemaId: id, metadata: { name: 'x', volumeMl: 1 } },
    });
    expectError(refused, 400, 'VALIDATION_ERROR');
    expect(JSON.stringify(refused.body.error?.details)).toContain('schemaId');
  });

  it('needs schemas:read and schemas:write', async () => {
    const reader = (await api('POST', '/keys', { key: brand, body: { name: 'reader', scopes: ['schemas:read'] } })).body
      .secret as string;
    expect((await api('GET', '/schemas', { key: reader })).status).toBe(200);
    expectError(await api('POST', '/schemas', { key: reader, body: perfume }), 403, 'INSUFFICIENT_SCOPE');
  });
});
