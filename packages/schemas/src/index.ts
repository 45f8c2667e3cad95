export {
  checkDefinition,
  type DefinitionProblem,
  type FieldDefinition,
  type FieldType,
  fieldTypes,
  type SchemaDefinition,
} from './field-definition.ts';
export { compileMetadataSchema, type MetadataError, type MetadataValidator } from './metadata-validator.ts';
export { type SchemaTemplate, schemaTemplates } from './templates.ts';
