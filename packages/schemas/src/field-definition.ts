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
const maxDepth = 5;
const maxFields = 200;

/**
 * Checks a schema definition and names each bad field by its path: names unique, non-empty and
 * plain; types from the documented set; `items` only on arrays, `fields` only on objects (or arrays
 * of objects). Empty when the definition is good.
 */
export function checkDefinition(definition: SchemaDefinition): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  let count = 0;
  const visit = (fields: readonly FieldDefinition[], path: string, depth: number) => {
    if (depth > maxDepth) {
      problems.push({ field: path || 'fields', message: `nests deeper than ${maxDepth} levels` });
      return;
    }
    const seen = new Set<string>();
    fields.forEach((field, index) => {
      count += 1;
      const where = `${path}fields[${index}]`;
      const name = typeof field.name === 'string' ? field.name : '';
      const label = name ? `${path}${name}` : where;
      if (!name) problems.push({ field: where, message: 'has no name' });
      else if (!namePattern.test(name))
        problems.push({
          field: label,
          message: 'name must start with a letter or _ and hold letters, digits, _ or - (at most 64)',
        });
      else if (seen.has(name)) problems.push({ field: label, message: 'is named twice' });
      seen.add(name);
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
