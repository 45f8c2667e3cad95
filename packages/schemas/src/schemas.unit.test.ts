import { describe, expect, it } from 'vitest';
import { checkDefinition, type FieldDefinition, maxDefinitionProblems, reservedFieldNames } from './field-definition.ts';
import { compileMetadataSchema } from './metadata-validator.ts';
import { schemaTemplates } from './templates.ts';

describe('checkDefinition', () => {
  it('accepts every type, arrays with items, objects with fields, and the templates', () => {
    expect(
      checkDefinition({
        fields: [
          { name: 'a', type: 'string', required: true },
          { name: 'b', type: 'number' },
          { name: 'c', type: 'integer' },
          { name: 'd', type: 'boolean' },
          { name: 'e', type: 'date' },
          { name: 'f', type: 'array', items: 'string' },
          { name: 'g', type: 'object', fields: [{ name: 'h', type: 'string' }] },
          { name: 'i', type: 'array', items: 'object', fields: [{ name: 'j', type: 'integer' }] },
        ],
      }),
    ).toEqual([]);
    for (const template of schemaTemplates) expect(checkDefinition(template), template.id).toEqual([]);
  });

  it('names each bad field by its path', () => {
    expect(
      checkDefinition({
        fields: [
          { name: '', type: 'string' },
          { name: 'dup', type: 'string' },
          { name: 'dup', type: 'number' },
          { name: 'kind', type: 'colour' as never },
          { name: 'tags', type: 'array' },
          { name: 'title', type: 'string', items: 'string' },
          { name: 'box', type: 'object', fields: [{ name: 'size', type: 'vector' as never }] },
          { name: '9lives', type: 'string' },
        ],
      }).map((problem) => problem.field),
    ).toEqual(['fields[0]', 'dup', 'kind', 'tags', 'title', 'box.size', '9lives']);
    expect(checkDefinition({ fields: [] })).toEqual([{ field: 'fields', message: 'needs at least one field' }]);
  });

  // Nested fields reach the check as any JSON: `[null]` threw a TypeError here (a 500 on POST /schemas).
  it('names a nested entry that is not an object by its path, without throwing', () => {
    const nested = (entries: unknown[]) =>
      checkDefinition({ fields: [{ name: 'a', type: 'object', fields: entries as FieldDefinition[] }] });
    for (const entry of [null, 'b', 1, true, [], [{ name: 'b', type: 'string' }]]) {
      expect(nested([entry]), JSON.stringify(entry)).toEqual([
        { field: 'a.fields[0]', message: 'must be an object { name, type, … }' },
      ]);
    }
    expect(
      checkDefinition({
        fields: [
          { name: 'box', type: 'array', items: 'object', fields: [{ name: 'lid', type: 'object', fields: [null] as never }] },
        ],
      }),
    ).toEqual([{ field: 'box.lid.fields[0]', message: 'must be an object { name, type, … }' }]);
    expect(nested([{ name: 'b', type: 'string', required: 'yes', description: 7 }]).map((problem) => problem.message)).toEqual([
      'required must be true or false',
      'description must be a text of at most 500 characters',
    ]);
  });

  // `__proto__` was stored, then made every check of the schema a 500; `constructor` and `toString`
  // were read from the prototype of any data.
  it('refuses the names of Object.prototype at any depth', () => {
    for (const name of reservedFieldNames) {
      expect(checkDefinition({ fields: [{ name, type: 'string' }] }), name).toEqual([
        { field: name, message: expect.stringContaining('is a reserved name') },
      ]);
      expect(
        checkDefinition({ fields: [{ name: 'box', type: 'object', fields: [{ name, type: 'string' }] }] }).map(
          (problem) => problem.field,
        ),
      ).toEqual([`box.${name}`]);
    }
    expect(reservedFieldNames).toEqual(expect.arrayContaining(['__proto__', 'constructor', 'toString', 'valueOf']));
    expect([...reservedFieldNames].sort()).toEqual(Object.getOwnPropertyNames(Object.prototype).sort());
    expect(
      checkDefinition({
        fields: [
          { name: 'prototype', type: 'string' },
          { name: '_constructor', type: 'string' },
        ],
      }),
    ).toEqual([]);
  });

  // A nested `enum` was stored and shown back, but never applied: the schema said more than it checked.
  it('refuses keys outside the field model at any depth, except in a definition stored before', () => {
    const definition = {
      fields: [{ name: 'box', type: 'object', fields: [{ name: 'grade', type: 'string', enum: ['A'] }] }],
    } as never;
    expect(checkDefinition(definition)).toEqual([
      { field: 'box.grade', message: expect.stringContaining('enum is not an accepted field') },
    ]);
    expect(checkDefinition(definition, { storedBefore: true })).toEqual([]);
    expect(compileMetadataSchema(definition).validate({ box: { grade: 'Z' } }).isValid).toBe(true);
  });

  // 500,000 bad entries below the request schema's reach were a 60 MB answer and a second of the loop.
  it('stops at the first field past 200 and lists at most 100 problems, however many were sent', () => {
    const entries = (count: number, entry: (index: number) => unknown) =>
      checkDefinition({
        fields: [{ name: 'a', type: 'object', fields: Array.from({ length: count }, (_, index) => entry(index)) as never }],
      });
    expect(entries(500_000, () => 0)).toHaveLength(maxDefinitionProblems);
    const named = (index: number) => ({ name: `b${index}`, type: 'string' });
    expect(entries(500, named)).toEqual([{ field: 'fields', message: 'has more than 200 fields' }]);
    expect(entries(199, named)).toEqual([]);
  });
});

describe('compileMetadataSchema', () => {
  const wine = compileMetadataSchema(schemaTemplates.find((template) => template.id === 'tpl_wine_spirits') as never);
  const nested = compileMetadataSchema({
    fields: [
      {
        name: 'ingredients',
        type: 'array',
        items: 'object',
        fields: [
          { name: 'name', type: 'string', required: true },
          { name: 'grams', type: 'number' },
        ],
      },
    ],
  });

  it('accepts good data', () => {
    expect(
      wine.validate({
        name: 'Clos X',
        producer: 'Domaine Y',
        alcoholByVolume: 13.5,
        volumeMl: 750,
        vintage: 2019,
        bottledOn: '2021-06-01',
      }),
    ).toEqual({
      isValid: true,
      errors: [],
      errorsTruncated: false,
    });
  });

  it('reports every problem with a readable message and the path of nested fields', () => {
    const result = wine.validate({ name: 'Clos X', alcoholByVolume: '13%', volumeMl: 750.5, bottledOn: 'June', colour: 'red' });
    expect(result.isValid).toBe(false);
    expect(result.errors).toEqual(
      expect.arrayContaining([
        { field: 'producer', message: 'is required' },
        { field: 'alcoholByVolume', message: 'must be a number' },
        { field: 'volumeMl', message: 'must be a whole number' },
        { field: 'bottledOn', message: 'must be an ISO 8601 date (YYYY-MM-DD) or date-time' },
        { field: 'colour', message: 'is not in the schema' },
      ]),
    );
    expect(nested.validate({ ingredients: [{ name: 'a' }, { grams: 'x' }] }).errors).toEqual([
      { field: 'ingredients[1].name', message: 'is required' },
      { field: 'ingredients[1].grams', message: 'must be a number' },
    ]);
  });

  it('lets unknown fields through only when the schema says so', () => {
    const open = compileMetadataSchema({ fields: [{ name: 'a', type: 'string' }], additionalProperties: true });
    expect(open.validate({ a: 'x', b: 1 }).isValid).toBe(true);
  });
});
