// A metadata schema of one account, as a decider: no I/O, no clock. Its events live in the
// account's stream (`schema.created`, `schema.updated`, `schema.deleted`), so an export can show
// which version a code was checked against. The shell loads the state from the schema's rows (they
// are written in the events' transaction, so they are the folded stream), decides, and appends
// with the rows guarded by the version it loaded: a change that lost a race is decided again.
// Templates are not aggregates: they are read-only, and the shell refuses changes to them.

import { type DomainError as ContractsDomainError, isDomainError as isRefusedDecision, refuse } from '@hallmark/contracts';
import { checkDefinition, type FieldDefinition } from '@hallmark/schemas';

export type SchemaContent = {
  name: string;
  vertical: string;
  fields: FieldDefinition[];
  additionalProperties: boolean;
};

export type SchemaState =
  | { status: 'absent' }
  | { status: 'live' | 'deleted'; schemaId: string; version: number; content: SchemaContent };

export type SchemaCommand =
  | { type: 'CreateSchema'; schemaId: string; content: SchemaContent; copiedFrom?: string | undefined }
  | { type: 'UpdateSchema'; schemaId: string; change: Partial<SchemaContent> }
  | { type: 'DeleteSchema'; schemaId: string };

export type SchemaEvent =
  | { type: 'schema.created'; data: { schemaId: string; version: 1; copiedFrom?: string } & SchemaContent }
  | { type: 'schema.updated'; data: { schemaId: string; version: number } & SchemaContent }
  | { type: 'schema.deleted'; data: { schemaId: string } };

/** A refusal, as a value; the shell answers it with the same code. */
export type DomainError = ContractsDomainError<'CONFLICT' | 'NOT_FOUND' | 'VALIDATION_ERROR'>;

export const isDomainError = (decision: readonly SchemaEvent[] | DomainError): decision is DomainError =>
  isRefusedDecision(decision);

export const initialSchemaState: SchemaState = { status: 'absent' };

/** The definition's problems as the API answers them (each field named by its path under `fields`). */
function definitionProblem(content: SchemaContent): DomainError | undefined {
  const problems = checkDefinition(content);
  if (problems.length === 0) return undefined;
  return refuse('VALIDATION_ERROR', `Invalid schema: check ${problems.map((problem) => problem.field).join(', ')}.`, {
    fields: problems.map((problem) => ({
      field: `fields.${problem.field}`.replace('fields.fields', 'fields'),
      in: 'body',
      message: problem.message,
    })),
  });
}

const notFound = (schemaId: string) => refuse('NOT_FOUND', `There is no schema ${schemaId}.`, { id: schemaId });

/**
 * Create makes version 1 of a good definition; update makes the next version from the current one
 * changed by the command (the result must be a good definition); a deleted schema is gone: it
 * refuses updates and a second deletion as one that never was (NOT_FOUND).
 */
export function decide(command: SchemaCommand, state: SchemaState): SchemaEvent[] | DomainError {
  switch (command.type) {
    case 'CreateSchema': {
      if (state.status !== 'absent') {
        return refuse('CONFLICT', `Schema ${command.schemaId} exists already.`, { id: command.schemaId });
      }
      const problem = definitionProblem(command.content);
      if (problem) return problem;
      return [
        {
          type: 'schema.created',
          data: {
            schemaId: command.schemaId,
            version: 1,
            ...command.content,
            ...(command.copiedFrom ? { copiedFrom: command.copiedFrom } : {}),
          },
        },
      ];
    }
    case 'UpdateSchema': {
      if (state.status !== 'live') return notFound(command.schemaId);
      const { change } = command;
      const content: SchemaContent = {
        name: change.name ?? state.content.name,
        vertical: change.vertical ?? state.content.vertical,
        fields: change.fields ?? state.content.fields,
        additionalProperties: change.additionalProperties ?? state.content.additionalProperties,
      };
      const problem = definitionProblem(content);
      if (problem) return problem;
      return [{ type: 'schema.updated', data: { schemaId: state.schemaId, version: state.version + 1, ...content } }];
    }
    case 'DeleteSchema':
      if (state.status !== 'live') return notFound(command.schemaId);
      return [{ type: 'schema.deleted', data: { schemaId: state.schemaId } }];
    default:
      return command satisfies never;
  }
}

/** Applies one event (a new state; the old one is left as it was). */
export function evolve(state: SchemaState, event: SchemaEvent): SchemaState {
  switch (event.type) {
    case 'schema.created': {
      const { schemaId, name, vertical, fields, additionalProperties } = event.data;
      return { status: 'live', schemaId, version: 1, content: { name, vertical, fields, additionalProperties } };
    }
    case 'schema.updated': {
      if (state.status === 'absent') return state;
      const { version, name, vertical, fields, additionalProperties } = event.data;
      return { ...state, version, content: { name, vertical, fields, additionalProperties } };
    }
    case 'schema.deleted':
      return state.status === 'absent' ? state : { ...state, status: 'deleted' };
    default:
      return event satisfies never;
  }
}
