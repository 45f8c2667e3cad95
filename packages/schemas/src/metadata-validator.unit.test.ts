import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import type { FieldDefinition } from './field-definition.ts';
import { compileMetadataSchema, UnusableDefinitionError } from './metadata-validator.ts';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** The JSON Schemas Ajv compiles while `run` runs, held weakly: whether anything still holds them is the question. */
function compiledDuring(run: () => void): WeakRef<object>[] {
  const compile = Ajv.prototype.compile;
  const compiled: WeakRef<object>[] = [];
  Ajv.prototype.compile = function (this: Ajv, schema: object, meta?: boolean) {
    compiled.push(new WeakRef(schema));
    return compile.call(this, schema, meta);
  } as typeof compile;
  try {
    run();
  } finally {
    Ajv.prototype.compile = compile;
  }
  return compiled;
}

describe('compiled validators', () => {
  const fields: FieldDefinition[] = Array.from({ length: 200 }, (_, index) => ({
    name: `field${index}`,
    type: index % 2 ? 'string' : 'number',
    required: index === 0,
  }));

  // One Ajv for the module kept each compiled schema (its cache and `ajv.scope`), so dropping a
  // validator freed nothing: 2,000 compiles of 200 fields left +160 MB. Now what a validator compiled
  // goes with it.
  it('are freed with their validator, however many were compiled', async () => {
    const compiled = compiledDuring(() => {
      for (let index = 0; index < 50; index++) {
        const validator = compileMetadataSchema({ fields });
        expect(validator.validate({ field0: 1 }).isValid).toBe(true);
      }
    });
    expect(compiled).toHaveLength(50);
    // A WeakRef's target is kept until the job that made it ends.
    await new Promise((resolve) => setTimeout(resolve, 0));
    collectGarbage();
    expect(compiled.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
  });

  it('keep what they compiled while they are used', async () => {
    let validator: ReturnType<typeof compileMetadataSchema> | undefined;
    const [compiled] = compiledDuring(() => {
      validator = compileMetadataSchema({ fields });
    });
    await new Promise((resolve) => setTimeout(resolve, 0));
    collectGarbage();
    expect(compiled?.deref()).toBeDefined();
    expect(validator?.validate({ field0: 'x' }).errors).toEqual([{ field: 'field0', message: 'must be a number' }]);
  });
});

describe('field names of Object.prototype', () => {
  it('are not read from the data’s prototype, nor written to the schema’s', () => {
    // A definition refused at once; if one was stored before, compiling it says why instead of checking
    // data against another schema (or failing as a 500, for `__proto__`).
    for (const name of ['__proto__', 'constructor', 'toString']) {
      expect(() => compileMetadataSchema({ fields: [{ name, type: 'string', required: true }] }), name).toThrow(
        UnusableDefinitionError,
      );
    }
    const validator = compileMetadataSchema({
      fields: [
        { name: 'name', type: 'string', required: true },
        { name: 'box', type: 'object', fields: [{ name: 'size', type: 'number' }] },
      ],
    });
    // An own `constructor` of the data is a property the schema does not name, not a type error.
    expect(validator.validate(JSON.parse('{"name":"x","constructor":1}'))).toEqual({
      isValid: false,
      errors: [{ field: 'constructor', message: 'is not in the schema' }],
      errorsTruncated: false,
    });
    expect(validator.validate({ name: 'x', box: {} }).isValid).toBe(true);
  });

  it('name what is wrong in the error a compile throws', () => {
    const error = (() => {
      try {
        compileMetadataSchema({ fields: [{ name: 'box', type: 'object', fields: [null as never] }] });
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(UnusableDefinitionError);
    expect((error as UnusableDefinitionError).problems).toEqual([
      { field: 'box.fields[0]', message: 'must be an object { name, type, … }' },
    ]);
  });
});

describe('errors of data with many', () => {
  const validator = compileMetadataSchema({
    fields: [
      { name: 'id', type: 'string', required: true },
      {
        name: 'items',
        type: 'array',
        items: 'object',
        fields: ['a', 'b', 'c', 'd'].map((name) => ({ name, type: 'string' as const, required: true })),
      },
    ],
  });
  const empties = (count: number) => ({ id: 'x', items: Array.from({ length: count }, () => ({})) });

  it('lists the first 100 in the data’s order, and says there are more', () => {
    const outcome = validator.validate(empties(30));
    expect(outcome.errors).toHaveLength(100);
    expect(outcome.errorsTruncated).toBe(true);
    expect(outcome.errors.slice(0, 5).map((error) => error.field)).toEqual([
      'items[0].a',
      'items[0].b',
      'items[0].c',
      'items[0].d',
      'items[1].a',
    ]);
    expect(validator.validate(empties(25))).toMatchObject({ errorsTruncated: false });
    expect(validator.validate(empties(25)).errors).toHaveLength(100);
  });

  it('looks only for the first when the data could hold more than 10,000 (values times the widest object plus one)', () => {
    // Values: the data, `id`, the array and its elements; each may fail up to 5 ways (4 fields + its type).
    expect(validator.validate(empties(1_997)).errors).toHaveLength(100);
    const crowded = validator.validate(empties(1_998));
    expect(crowded).toEqual({ isValid: false, errors: [{ field: 'items[0].a', message: 'is required' }], errorsTruncated: true });
    expect(validator.validate({ ...empties(100_000), id: 'y' }).errors).toHaveLength(1);
  });
});
