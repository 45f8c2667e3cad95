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

/**
 * Checks a schema definition and names each bad field by its path: each an object; names unique,
 * non-empty, plain and not one of reservedFieldNames; types from the documented set; `items` only on
 * arrays, `fields` only on objects (or arrays of objects). Empty when the definition is good. Nested
 * fields arrive unchecked by the request's schema, so any JSON value is taken here without throwing.
 */
export function checkDefinition(definition: SchemaDefinition): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  let count = 0;
  const visit = (fields: readonly unknown[], path: string, depth: number) => {
    if (depth > maxDepth) {
      problems.push({ field: path || 'fields', message: `nests deeper than ${maxDepth} levels` });
      return;
    }
    const seen = new Set<string>();
    fields.forEach((entry, index) => {
      count += 1;
      const where = `${path}fields[${index}]`;
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
        problems.push({ field: where, message: 'must be an object { name, type, … }' });
        return;
      }
      const field = entry as FieldDefinition;
      const name = typeof field.name === 'string' ? field.name : '';
      const label = name ? `${path}${name}` : where;
      if (!name) problems.push({ field: where, message: 'has no name' });
      else if (!namePattern.test(name))
        problems.push({
          field: label,
          message: 'name must start with a letter or _ and hold letters, digits, _ or - (at most 64)',
        });
      else if (reservedFieldNames.includes(name))
        problems.push({ field: label, message: `is a reserved name (${reservedFieldNames.join(', ')})` });
      else if (seen.has(name)) problems.push({ field: label, message: 'is named twice' });
      seen.add(name);
      if (field.required !== undefined && typeof field.required !== 'boolean')
        problems.push({ field: label, message: 'required must be true or false' });
      if (field.description !== undefined && (typeof field.description !== 'string' || field.description.length > 500))
        problems.push({ field: label, message: 'description must be a text of at most 500 characters' });
      if (!(fieldTypes as readonly string[]).includes(field.type)) {
        problems.push({ field: label, message: `type must be one of ${fieldTypes.join(', ')}` });
        return;
      }
      if (field.items !== undefined && field.type !== 'array')
        problems.push({ field: label, message: 'items is only for arrays' });
      if (field.type === 'array') {
        const itemTypes = fieldTypes.filter((type) => type !== 'array');
        if (!itemTypes.includes(field.items as never))
          problems.push({ field: label, message: `an array needs items: one of ${itemTypes.join(', ')}` });
      }
      const takesFields = field.type === 'object' || (field.type === 'array' && field.items === 'object');
      if (field.fields !== undefined && !takesFields)
        problems.push({ field: label, message: 'fields is only for objects and arrays of objects' });
      if (takesFields) {
        if (!Array.isArray(field.fields)) problems.push({ field: label, message: 'an object needs fields' });
        else visit(field.fields, `${label}.`, depth + 1);
      }
    });
  };
  if (!Array.isArray(definition.fields) || definition.fields.length === 0)
    return [{ field: 'fields', message: 'needs at least one field' }];
  visit(definition.fields, '', 1);
  if (count > maxFields) problems.push({ field: 'fields', message: `has ${count} fields; at most ${maxFields}` });
  return problems;
}
