export {
  checkDefinition,
  type DefinitionProblem,
  type FieldDefinition,
  type FieldType,
  fieldTypes,
  reservedFieldNames,
  type SchemaDefinition,
} from './field-definition.ts';
export {
  compileMetadataSchema,
  type MetadataError,
  type MetadataValidation,
  type MetadataValidator,
  maxMetadataErrors,
  UnusableDefinitionError,
} from './metadata-validator.ts';
export { type SchemaTemplate, schemaTemplates } from './templates.ts';
