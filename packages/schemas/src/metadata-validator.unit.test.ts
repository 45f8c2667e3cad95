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
