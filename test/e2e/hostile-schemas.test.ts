import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// A hostile review of metadata schemas (POST/GET/PATCH/DELETE /schemas, POST /schemas/{id}/validate,
// templates copied with `copyFrom`) and of the metadata of codes that name a schema. Definitions are
// checked in packages/schemas/src/field-definition.ts (checkDefinition, called by the decider in
// services/code-service/src/domain/metadata-schema.ts); data is checked by the Ajv validator of
// packages/schemas/src/metadata-validator.ts; the catalog is services/code-service/src/handlers/schemas.ts.
// Tenant A (`brand`) and tenant B (`rival`) each own a GTIN prefix. Found and fixed (2026-12-05): a
// `date` of 2027-02-30 was valid; a nested `enum` was stored and never applied; half a million
// entries below the request schema's reach answered 60 MB and held the loop a second; templates
// ignored `limit`; an integer past 2^53 was stored as another number. In the serial project: one
// test times another tenant's verifications.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let brand: string;
let rival: string;
const gtinA = '09506000134352';
const gtinB = '09506001234563';

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

/** A request whose JSON body is sent as written (numbers JSON.stringify cannot write). */
async function raw(method: string, path: string, key: string, body?: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${t.url}/api/v1${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body } : {}),
  });
  return { status: response.status, text: await response.text() };
}

function expectError(response: ApiResponse<Json>, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code, JSON.stringify(response.body)).toBe(code);
  expect(response.body.meta?.requestId).toEqual(expect.any(String));
}

let serials = 0;
const serial = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(serials += 1)}`;

async function createSchema(key: string, body: Json): Promise<string> {
  const created = await api('POST', '/schemas', { key, body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id as string;
}

beforeAll(async () => {
  t = await startTestProduct();
  const operator = t.product.generatedOperatorKey as string;
  const tenant = async (name: string, prefix: string) => {
    const created = await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const grant = await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { prefix } });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    return created.body.apiKey.secret as string;
  };
  brand = await tenant('Schema brand', '9506000');
  rival = await tenant('Schema rival', '9506001');
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

describe('metadata schemas under attack', () => {
  it('a `date` field refuses calendar dates that do not exist (2027-02-30, 2027-04-31, 2027-02-29)', async () => {
    // Expectation: DECISIONS.md (Schemas) gives `date (ISO 8601)` as a field type and docs/API.md
    // says "date (ISO 8601 date or date-time)". ISO 8601 has no 30 February, no 31 April and no 29
    // February in a common year. The product itself refuses exactly these as `expiryDate`
    // (packages/codes toYymmdd: "2027-02-30, … which new Date reads as 2 March"), so a careful user
    // expects the same of a `date` field: validate answers isValid false naming the field, and
    // generation refuses the metadata, rather than storing a date no reader can interpret.
    const id = await createSchema(brand, {
      name: 'Dated',
      vertical: 'luxury',
      fields: [{ name: 'launch', type: 'date', required: true }],
    });
    const validate = (launch: string) => api('POST', `/schemas/${id}/validate`, { key: brand, body: { launch } });
    // Controls: real dates pass, an impossible month is refused (Date.parse gives NaN for it).
    for (const good of ['2028-02-29', '2027-02-28', '2027-04-30T23:59:59Z']) {
      expect((await validate(good)).body.isValid, good).toBe(true);
    }
    expect((await validate('2027-13-01')).body.isValid).toBe(false);
    const answers: Record<string, unknown> = {};
    for (const impossible of ['2027-02-30', '2027-04-31', '2027-02-29', '2027-02-31T12:00:00Z']) {
      const answer = await validate(impossible);
      expect(answer.status).toBe(200);
      answers[impossible] = { isValid: answer.body.isValid, errors: answer.body.errors };
    }
    const refused = {
      isValid: false,
      errors: [{ field: 'launch', message: 'must be an ISO 8601 date (YYYY-MM-DD) or date-time' }],
    };
    expect(answers).toEqual({
      '2027-02-30': refused,
      '2027-04-31': refused,
      '2027-02-29': refused,
      '2027-02-31T12:00:00Z': refused,
    });
    // And generation does not sign a code whose metadata carries it.
    const generated = await api('POST', '/code/generate', {
      key: brand,
      body: { gtin: gtinA, serialNumber: serial('DATE'), schemaId: id, metadata: { launch: '2027-02-30' } },
    });
    expectError(generated, 400, 'VALIDATION_ERROR');
  });

  it('a nested field with a property outside the field model (enum, pattern) is refused as it is at the top level', async () => {
    // Expectation: docs/API.md (Metadata schemas): "A field is { name, type, required?, items?,
    // fields?, description? } … Each nested field is an object like the top-level ones", and
    // "Unknown body fields are refused, not dropped". At the top level `enum` is a 400
    // ("fields.0.enum is not an accepted field"). A nested field carrying it must be refused the same
    // way: stored silently, it reads as a constraint (the schema answers it back in GET) while the
    // validator ignores it, so data the owner meant to refuse is signed.
    const topLevel = await api('POST', '/schemas', {
      key: brand,
      body: { name: 'Graded', vertical: 'luxury', fields: [{ name: 'grade', type: 'string', enum: ['A', 'B'] }] },
    });
    expectError(topLevel, 400, 'VALIDATION_ERROR');

    const nested = await api('POST', '/schemas', {
      key: brand,
      body: {
        name: 'Graded box',
        vertical: 'luxury',
        fields: [
          {
            name: 'box',
            type: 'object',
            fields: [
              { name: 'grade', type: 'string', enum: ['A', 'B'] },
              { name: 'code', type: 'string', pattern: '^[0-9]{4}$' },
            ],
          },
        ],
      },
    });
    expect.soft(nested.status, JSON.stringify(nested.body)).toBe(400);
    expect.soft(nested.body.error?.code).toBe('VALIDATION_ERROR');
    expect
      .soft(((nested.body.error?.details?.fields ?? []) as Array<{ field: string }>).map((entry) => entry.field).join(' '))
      .toMatch(/grade.*code|code.*grade/);
    if (nested.status === 201) {
      // What storing it means: the schema shows the constraint and does not apply it.
      const checked = await api('POST', `/schemas/${nested.body.id}/validate`, {
        key: brand,
        body: { box: { grade: 'Z', code: 'not digits' } },
      });
      expect.soft(checked.body.isValid, 'a stored nested `enum`/`pattern` is shown but never applied').toBe(false);
    }
  });

  it('a definition of half a million nested entries is refused with a bounded answer, without stalling other tenants', async () => {
    // Expectation: a bad definition is `VALIDATION_ERROR` naming bad fields (docs/API.md), and the
    // product bounds what a refusal costs and answers ("never an answer larger than its question",
    // metadata-validator.ts; validation lists at most 100 errors). A definition may hold at most 200
    // fields, so a body of 1 MB that holds 500,000 entries at the third level (where the request
    // schema's maxItems no longer applies) should be refused after a bounded amount of work, with an
    // answer of a few KB, and tenant B's verifications (a few ms) should not wait on it.
    const code = await api('POST', '/code/generate', { key: rival, body: { gtin: gtinB, serialNumber: serial('STALL') } });
    expect(code.status, JSON.stringify(code.body)).toBe(201);
    const verify = async () => {
      const started = performance.now();
      const answer = await api('POST', '/code/verify', { key: rival, body: { url: code.body.url } });
      expect(answer.status).toBe(200);
      return performance.now() - started;
    };
    for (let i = 0; i < 3; i += 1) await verify(); // warm

    const entries = Array(500_000).fill('0').join(',');
    const body = `{"name":"Huge","vertical":"luxury","fields":[{"name":"a","type":"object","fields":[{"name":"b","type":"object","fields":[${entries}]}]}]}`;
    expect(body.length).toBeLessThan(1024 * 1024);
    const sendHostile = () =>
      new Promise<{ status: number; bytes: number; head: string }>((resolve, reject) => {
        const sent = request(
          `${t.url}/api/v1/schemas`,
          { method: 'POST', headers: { 'x-api-key': brand, 'content-type': 'application/json' } },
          (response) => {
            let bytes = 0;
            let head = '';
            response.on('data', (chunk: Buffer) => {
              if (head.length < 200) head += chunk.toString('utf8', 0, 200);
              bytes += chunk.length;
            });
            response.on('end', () => resolve({ status: response.statusCode ?? 0, bytes, head }));
          },
        );
        sent.on('error', reject);
        sent.end(body);
      });
    /** The worst latency of tenant B's verifications, one every 25 ms, while one hostile definition is worked on. */
    const worstWhileHostile = async () => {
      const hostile = sendHostile();
      let finished = false;
      void hostile.then(() => {
        finished = true;
      });
      const latencies: Array<Promise<number>> = [];
      while (!finished) {
        latencies.push(verify());
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const answer = await hostile;
      expect(answer.status, answer.head).toBe(400);
      expect(answer.head).toContain('"VALIDATION_ERROR"');
      expect.soft(answer.bytes, 'bytes of the 400 answer to a 1 MB definition').toBeLessThanOrEqual(64 * 1024);
      return Math.max(...(await Promise.all(latencies)));
    };
    // Three rounds, judged by the middle one: work the definition costs the event loop shows in
    // every round (before the fix, a second each), while a pause of the machine or of the test
    // process's garbage collector shows in one (772 ms once in CI on a loaded hour, 40-60 ms here).
    const worsts: number[] = [];
    for (let round = 0; round < 3; round += 1) worsts.push(await worstWhileHostile());
    const median = [...worsts].sort((a, b) => a - b)[1] as number;
    expect
      .soft(
        Math.round(median),
        `median of each round's worst latency (ms) of tenant B’s verifications: ${worsts.map(Math.round).join(', ')}`,
      )
      .toBeLessThan(500);
  }, 30_000);

  it('GET /schemas?templates=true honours `limit` and pages with a cursor', async () => {
    // Expectation: DECISIONS.md: lists are `{ <items>, pagination: { limit, nextCursor, hasMore } }`
    // with cursor paging (`?limit=&cursor=`). A page asked for with limit=1 holds at most one schema,
    // and hasMore/nextCursor lead to the rest (three templates: docs/API.md, Templates).
    const first = await api('GET', '/schemas?templates=true&limit=1', { key: brand });
    expect(first.status).toBe(200);
    const seen: string[] = [];
    let page = first;
    for (let pages = 0; pages < 5; pages += 1) {
      expect(page.body.schemas.length, JSON.stringify(page.body.pagination)).toBeLessThanOrEqual(1);
      seen.push(...page.body.schemas.map((schema: Json) => schema.id));
      if (!page.body.pagination.hasMore) break;
      page = await api('GET', `/schemas?templates=true&limit=1&cursor=${encodeURIComponent(page.body.pagination.nextCursor)}`, {
        key: brand,
      });
    }
    expect(seen.sort()).toEqual(['tpl_luxury_goods', 'tpl_pharma_dscsa', 'tpl_wine_spirits']);
  });

  it('an `integer` field given 9007199254740993 is refused or kept exactly, never signed as another number', async () => {
    // Expectation: DECISIONS.md lists `integer` as a field type, and docs/API.md refuses numbers JSON
    // cannot carry on ("1e999 … would be stored as null … 400 VALIDATION_ERROR naming the field").
    // 9007199254740993 is a whole number the client sent; parsed as a double it becomes
    // 9007199254740992. A careful user expects either a 400 naming `metadata.units` (beyond the
    // integers the product can keep) or the code's stored metadata to hold the number sent, not a
    // neighbour it never sent, signed into the code's history and shown by GET /codes/{assetId}.
    const id = await createSchema(brand, {
      name: 'Counted',
      vertical: 'luxury',
      fields: [{ name: 'units', type: 'integer', required: true }],
    });
    const made = await raw(
      'POST',
      '/code/generate',
      brand,
      `{"gtin":"${gtinA}","serialNumber":"${serial('BIG')}","schemaId":"${id}","metadata":{"units":9007199254740993}}`,
    );
    if (made.status === 400) {
      expect(made.text).toContain('VALIDATION_ERROR');
      expect(made.text).toContain('units');
      return;
    }
    expect(made.status, made.text).toBe(201);
    const stored = await raw('GET', `/codes/${JSON.parse(made.text).assetId}`, brand);
    expect(stored.status, stored.text).toBe(200);
    expect(stored.text.match(/"units":\s*(-?[0-9.eE+]+)/)?.[1], 'units as the code stores it').toBe('9007199254740993');
  });

  it('concurrent PATCHes each land once, with consecutive versions that read back as each answer said; a racing DELETE ends it cleanly', async () => {
    // Expectation: docs/API.md, Versions: "PATCH … writes version n+1; GET /schemas/{id}?version=n
    // reads an earlier one". Ten PATCHes sent at once are ten updates: versions 2..11 each once (no
    // lost update, none duplicated or skipped), and each answer's version holds that request's name.
    // DELETE → 204; after it the schema is 404 everywhere and a PATCH racing it is 200 (before) or
    // 404 (after), never a 409/500; `DELETE` twice is 404 (a deleted schema is gone).
    const id = await createSchema(brand, {
      name: 'Raced',
      vertical: 'luxury',
      fields: [{ name: 'name', type: 'string' }],
    });
    const patches = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api('PATCH', `/schemas/${id}`, {
          key: brand,
          body: {
            name: `Raced ${i}`,
            fields: [
              { name: 'name', type: 'string' },
              { name: `f${i}`, type: 'integer' },
            ],
          },
        }),
      ),
    );
    expect(patches.map((answer) => answer.status)).toEqual(Array(10).fill(200));
    expect(patches.map((answer) => answer.body.version as number).sort((x, y) => x - y)).toEqual([
      2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
    ]);
    for (const [i, answer] of patches.entries()) {
      const version = await api('GET', `/schemas/${id}?version=${answer.body.version}`, { key: brand });
      expect(version.body.name).toBe(`Raced ${i}`);
      expect(version.body.fields.map((field: Json) => field.name)).toEqual(['name', `f${i}`]);
    }
    expect((await api('GET', `/schemas/${id}`, { key: brand })).body.version).toBe(11);

    const raced = await Promise.all([
      ...Array.from({ length: 4 }, (_, i) => api('PATCH', `/schemas/${id}`, { key: brand, body: { name: `Late ${i}` } })),
      api('DELETE', `/schemas/${id}`, { key: brand }),
    ]);
    const deletion = raced.at(-1) as ApiResponse<Json>;
    expect(deletion.status, JSON.stringify(deletion.body)).toBe(204);
    const patchStatuses = raced.slice(0, 4).map((answer) => answer.status);
    for (const status of patchStatuses) expect([200, 404]).toContain(status);
    const landed = raced.slice(0, 4).filter((answer) => answer.status === 200);
    expect(landed.map((answer) => answer.body.version as number).sort((x, y) => x - y)).toEqual(landed.map((_, i) => 12 + i));
    for (const answer of raced.slice(0, 4).filter((a) => a.status === 404)) expectError(answer, 404, 'NOT_FOUND');
    expectError(await api('GET', `/schemas/${id}`, { key: brand }), 404, 'NOT_FOUND');
    expectError(await api('DELETE', `/schemas/${id}`, { key: brand }), 404, 'NOT_FOUND');
    expectError(await api('PATCH', `/schemas/${id}`, { key: brand, body: { name: 'Back' } }), 404, 'NOT_FOUND');
    const listed = await api('GET', '/schemas?limit=100', { key: brand });
    expect(listed.body.schemas.map((schema: Json) => schema.id)).not.toContain(id);
  });

  it('PATCH and DELETE of a schema leave the codes that named it as they were, and close every path to the deleted versions', async () => {
    // Expectation: docs/API.md: a code's `code.generated` records schemaId and schemaVersion; PATCH
    // writes a new version and generation takes `schemaVersion` for an earlier one; after DELETE
    // "the schema then answers 404, and generation naming it is VALIDATION_ERROR (field schemaId)".
    // A code made under version 1 is not re-checked against version 2 (it still reads and verifies
    // AUTHENTIC with the metadata it was signed with); after DELETE no version of the schema is
    // reachable (`?version=1` included) and a code cannot be made against it.
    const id = await createSchema(brand, {
      name: 'Bottle',
      vertical: 'wine-spirits',
      fields: [
        { name: 'name', type: 'string', required: true },
        { name: 'lot', type: 'string' },
      ],
    });
    const metadata = { name: 'Cuvée 2019', lot: 'L1' };
    const made = await api('POST', '/code/generate', {
      key: brand,
      body: { gtin: gtinA, serialNumber: serial('V1'), schemaId: id, metadata },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);

    const patched = await api('PATCH', `/schemas/${id}`, {
      key: brand,
      body: {
        fields: [
          { name: 'name', type: 'string', required: true },
          { name: 'lot', type: 'string' },
          { name: 'grade', type: 'integer', required: true },
        ],
      },
    });
    expect(patched.body.version).toBe(2);
    // The old code is as it was.
    expect((await api('GET', `/codes/${made.body.assetId}`, { key: brand })).body.metadata).toEqual(metadata);
    expect((await api('POST', '/code/verify', { key: brand, body: { url: made.body.url } })).body.verdict).toBe('AUTHENTIC');
    // New codes are held to version 2 unless version 1 is named.
    const refused = await api('POST', '/code/generate', {
      key: brand,
      body: { gtin: gtinA, serialNumber: serial('V2'), schemaId: id, metadata },
    });
    expectError(refused, 400, 'VALIDATION_ERROR');
    expect(refused.body.error?.details).toMatchObject({
      schemaId: id,
      schemaVersion: 2,
      errors: [{ field: 'grade', message: 'is required' }],
    });
    const underV1 = await api('POST', '/code/generate', {
      key: brand,
      body: { gtin: gtinA, serialNumber: serial('V1B'), schemaId: id, schemaVersion: 1, metadata },
    });
    expect(underV1.status, JSON.stringify(underV1.body)).toBe(201);
    // Warm the per-version cache (kept 10 minutes), then delete: the deletion must reach it too.
    expect((await api('POST', `/schemas/${id}/validate?version=1`, { key: brand, body: metadata })).body.isValid).toBe(true);

    expect((await api('DELETE', `/schemas/${id}`, { key: brand })).status).toBe(204);
    expectError(await api('GET', `/schemas/${id}?version=1`, { key: brand }), 404, 'NOT_FOUND');
    expectError(await api('POST', `/schemas/${id}/validate?version=1`, { key: brand, body: metadata }), 404, 'NOT_FOUND');
    const afterDelete = await api('POST', '/code/generate', {
      key: brand,
      body: { gtin: gtinA, serialNumber: serial('V1C'), schemaId: id, schemaVersion: 1, metadata },
    });
    expectError(afterDelete, 400, 'VALIDATION_ERROR');
    expect(afterDelete.body.error?.details?.fields).toEqual([expect.objectContaining({ field: 'schemaId' })]);
    // The codes made under it stay readable and authentic.
    for (const code of [made.body, underV1.body]) {
      const read = await api('GET', `/codes/${code.assetId}`, { key: brand });
      expect(read.status).toBe(200);
      expect(read.body.metadata).toEqual(metadata);
      expect((await api('POST', '/code/verify', { key: brand, body: { url: code.url } })).body.verdict).toBe('AUTHENTIC');
    }
  });

  it('another tenant cannot copy, read or use a schema through copyFrom, and a copied template stays the template', async () => {
    // Expectation: DECISIONS.md: "Resources of another account answer 404 … never their data";
    // docs/API.md: `copyFrom` takes a template id, templates are read-only and every account reads the
    // same ones. Tenant B naming A's schema in `copyFrom` gets what any unknown id gets (no copy of
    // A's definition), and A's PATCH of its own copy of a template changes nothing B sees.
    const secret = await createSchema(brand, {
      name: 'Secret formula',
      vertical: 'luxury',
      fields: [{ name: 'formulaRef', type: 'string', required: true, description: 'A only' }],
    });
    const unknown = `sch_${'0'.repeat(20)}`;
    const viaCopy = await api('POST', '/schemas', { key: rival, body: { copyFrom: secret } });
    const viaUnknown = await api('POST', '/schemas', { key: rival, body: { copyFrom: unknown } });
    expectError(viaCopy, 400, 'VALIDATION_ERROR');
    expect(viaCopy.body.error?.details).toEqual(viaUnknown.body.error?.details);
    expect(viaCopy.body.error?.message.replace(secret, 'ID')).toBe(viaUnknown.body.error?.message.replace(unknown, 'ID'));
    expect(JSON.stringify(viaCopy.body)).not.toContain('formulaRef');
    // B may not generate against it either (its own GTIN).
    const generated = await api('POST', '/code/generate', {
      key: rival,
      body: { gtin: gtinB, serialNumber: serial('B'), schemaId: secret, metadata: { formulaRef: 'x' } },
    });
    expectError(generated, 400, 'VALIDATION_ERROR');
    expect(JSON.stringify(generated.body)).not.toContain('formulaRef');

    const templateBefore = (await api('GET', '/schemas/tpl_luxury_goods', { key: rival })).body;
    const copy = await createSchema(brand, { copyFrom: 'tpl_luxury_goods' });
    const patched = await api('PATCH', `/schemas/${copy}`, {
      key: brand,
      body: { name: 'Mine now', fields: [{ name: 'only', type: 'string' }] },
    });
    expect(patched.status).toBe(200);
    expect((await api('GET', '/schemas/tpl_luxury_goods', { key: rival })).body).toEqual(templateBefore);
    expect((await api('GET', '/schemas/tpl_luxury_goods', { key: brand })).body).toEqual(templateBefore);
    expectError(await api('PATCH', '/schemas/tpl_luxury_goods', { key: rival, body: { name: 'Hijacked' } }), 409, 'CONFLICT');
    expectError(await api('DELETE', '/schemas/tpl_luxury_goods', { key: rival }), 409, 'CONFLICT');
  });
});
