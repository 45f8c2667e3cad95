/** The field types a metadata schema may use (docs/INTERFACE.md, Metadata schemas). */
export const fieldTypes = ['string', 'number', 'integer', 'boolean', 'date', 'array', 'object'] as const;
export type FieldType = (typeof fieldTypes)[number];
export type ScalarType = Exclude<FieldType, 'array' | 'object'>;

export interface FieldDefinition {
  name: string;
  type: FieldType;
  required?: boolean;
  /** The element type, for `array` only. */
  items?: ScalarType | 'object';
  /** The fields of an `object`, or of the objects of an array whose items are `object`. */
  fields?: FieldDefinition[];
  description?: string;
}

export interface SchemaDefinition {
  fields: FieldDefinition[];
  /** Whether data may carry fields the schema does not name; false (reported) by default. */
  additionalProperties?: boolean;
}

export interface DefinitionProblem {
  field: string;
  message: string;
}

const namePattern = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
/**
 * The names of Object.prototype's properties: as a field, `__proto__` made the compiled schema invalid
 * (every check then a 500), and the others were read from any data's prototype.
 */
export const reservedFieldNames: readonly string[] = [
  '__proto__',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  'constructor',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  'toString',
  'valueOf',
];
const maxDepth = 5;
const maxFields = 200;
/** The most problems a check lists: a definition of 500,000 bad entries was a 60 MB answer and a second of the event loop. */
export const maxDefinitionProblems = 100;
/** The keys a field may have; any other (`enum`, `pattern`) would look like a constraint that is never applied. */
const fieldKeys: ReadonlySet<string> = new Set(['name', 'type', 'required', 'items', 'fields', 'description']);

/**
 * Checks a schema definition and names each bad field by its path: each an object of fieldKeys only;
 * names unique, non-empty, plain and not one of reservedFieldNames; types from the documented set;
 * `items` only on arrays, `fields` only on objects (or arrays of objects); at most maxFields in all.
 * Empty when the definition is good. Nested fields arrive unchecked by the request's schema, so any
 * JSON value is taken here without throwing, and the walk stops at the first field past maxFields or
 * at maxDefinitionProblems problems, whatever the size of what was sent. `storedBefore`: a definition
 * stored before other keys were refused (2026-12-05) keeps working as it did, its other keys ignored.
 */
export function checkDefinition(definition: SchemaDefinition, options: { storedBefore?: boolean } = {}): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  let count = 0;
  let stopped = false;
  const report = (field: string, message: string) => {
    problems.push({ field, message });
    if (problems.length >= maxDefinitionProblems) stopped = true;
  };
  const visit = (fields: readonly unknown[], path: string, depth: number) => {
    if (depth > maxDepth) {
      report(path || 'fields', `nests deeper than ${maxDepth} levels`);
      return;
    }
    const seen = new Set<string>();
    for (const [index, entry] of fields.entries()) {
      if (stopped) return;
      count += 1;
      if (count > maxFields) {
        report('fields', `has more than ${maxFields} fields`);
        stopped = true;
        return;
      }
      const where = `${path}fields[${index}]`;
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
        report(where, 'must be an object { name, type, … }');
        continue;
      }
      const field = entry as FieldDefinition;
      const name = typeof field.name === 'string' ? field.name : '';
      const label = name ? `${path}${name}` : where;
      if (!name) report(where, 'has no name');
      else if (!namePattern.test(name))
        report(label, 'name must start with a letter or _ and hold letters, digits, _ or - (at most 64)');
      else if (reservedFieldNames.includes(name)) report(label, `is a reserved name (${reservedFieldNames.join(', ')})`);
      else if (seen.has(name)) report(label, 'is named twice');
      seen.add(name);
      if (!options.storedBefore)
        for (const key of Object.keys(field))
          if (!fieldKeys.has(key)) report(label, `${key} is not an accepted field (${[...fieldKeys].join(', ')})`);
      if (field.required !== undefined && typeof field.required !== 'boolean') report(label, 'required must be true or false');
      if (field.description !== undefined && (typeof field.description !== 'string' || field.description.length > 500))
        report(label, 'description must be a text of at most 500 characters');
      if (!(fieldTypes as readonly string[]).includes(field.type)) {
        report(label, `type must be one of ${fieldTypes.join(', ')}`);
        continue;
      }
      if (field.items !== undefined && field.type !== 'array') report(label, 'items is only for arrays');
      if (field.type === 'array') {
        const itemTypes = fieldTypes.filter((type) => type !== 'array');
        if (!itemTypes.includes(field.items as never)) report(label, `an array needs items: one of ${itemTypes.join(', ')}`);
      }
      const takesFields = field.type === 'object' || (field.type === 'array' && field.items === 'object');
      if (field.fields !== undefined && !takesFields) report(label, 'fields is only for objects and arrays of objects');
      if (takesFields) {
        if (!Array.isArray(field.fields)) report(label, 'an object needs fields');
        else visit(field.fields, `${label}.`, depth + 1);
      }
    }
  };
  if (!Array.isArray(definition.fields) || definition.fields.length === 0)
    return [{ field: 'fields', message: 'needs at least one field' }];
  visit(definition.fields, '', 1);
  return problems.slice(0, maxDefinitionProblems);
}
