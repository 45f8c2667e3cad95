import { describe, expect, it } from 'vitest';
import {
  type DomainError,
  decide,
  evolve,
  initialSchemaState,
  isDomainError,
  type SchemaCommand,
  type SchemaContent,
  type SchemaEvent,
} from './metadata-schema.ts';

const content: SchemaContent = {
  name: 'Watches',
  vertical: 'luxury',
  fields: [{ name: 'reference', type: 'string', required: true }],
  additionalProperties: false,
};
const created = (extra: Partial<SchemaContent> = {}): SchemaEvent => ({
  type: 'schema.created',
  data: { schemaId: 'sch_1', version: 1, ...content, ...extra },
});
const updated = (version: number, extra: Partial<SchemaContent> = {}): SchemaEvent => ({
  type: 'schema.updated',
  data: { schemaId: 'sch_1', version, ...content, ...extra },
});
const deleted: SchemaEvent = { type: 'schema.deleted', data: { schemaId: 'sch_1' } };

const create = (extra: Partial<SchemaContent> = {}, copiedFrom?: string): SchemaCommand => ({
  type: 'CreateSchema',
  schemaId: 'sch_1',
  content: { ...content, ...extra },
  copiedFrom,
});
const update = (change: Partial<SchemaContent>): SchemaCommand => ({ type: 'UpdateSchema', schemaId: 'sch_1', change });
const remove: SchemaCommand = { type: 'DeleteSchema', schemaId: 'sch_1' };

/** given(events).when(command).then(events or a refusal): the decider alone, no HTTP, no database. */
function given(events: SchemaEvent[]) {
  const state = events.reduce(evolve, initialSchemaState);
  return {
    when(command: SchemaCommand) {
      const decision = decide(command, state);
      return {
        // biome-ignore lint/suspicious/noThenProperty: the given/when/then spec form; this object is never awaited
        then(expected: SchemaEvent[]) {
          expect(decision).toEqual(expected);
        },
        thenRefused(code: DomainError['code'], details: Record<string, unknown> = {}) {
          expect(isDomainError(decision), JSON.stringify(decision)).toBe(true);
          expect(decision).toMatchObject({ code, details });
        },
      };
    },
  };
}

describe('creating a schema', () => {
  it('makes version 1', () => given([]).when(create()).then([created()]));

  it('says which template it was copied from', () =>
    given([])
      .when(create({}, 'tpl_luxury_goods'))
      .then([{ type: 'schema.created', data: { schemaId: 'sch_1', version: 1, ...content, copiedFrom: 'tpl_luxury_goods' } }]));

  it('refuses a bad definition, naming the field by its path', () =>
    given([])
      .when(create({ fields: [{ name: 'bad name', type: 'string' }] }))
      .thenRefused('VALIDATION_ERROR', { fields: [expect.objectContaining({ field: 'fields.bad name', in: 'body' })] }));

  it('refuses an id that exists', () => given([created()]).when(create()).thenRefused('CONFLICT', { id: 'sch_1' }));
});

describe('updating a schema', () => {
  it('makes the next version from the current one and the change', () =>
    given([created()])
      .when(update({ name: 'Renamed' }))
      .then([updated(2, { name: 'Renamed' })]));

  it('counts versions on from the last update', () =>
    given([created(), updated(2, { name: 'Renamed' })])
      .when(update({ additionalProperties: true }))
      .then([updated(3, { name: 'Renamed', additionalProperties: true })]));

  it('refuses a change that makes the definition bad, and makes no version', () =>
    given([created()])
      .when(update({ fields: [{ name: 'n', type: 'string', items: 'string' }] }))
      .thenRefused('VALIDATION_ERROR'));

  it('a deleted schema refuses updates as one that never was', () =>
    given([created(), deleted])
      .when(update({ name: 'Back' }))
      .thenRefused('NOT_FOUND', { id: 'sch_1' }));

  it('an unknown schema is NOT_FOUND', () =>
    given([])
      .when(update({ name: 'x' }))
      .thenRefused('NOT_FOUND'));
});

describe('deleting a schema', () => {
  it('records the deletion', () =>
    given([created(), updated(2)])
      .when(remove)
      .then([deleted]));

  it('a deleted schema cannot be deleted again', () => given([created(), deleted]).when(remove).thenRefused('NOT_FOUND'));

  it('an unknown schema is NOT_FOUND', () => given([]).when(remove).thenRefused('NOT_FOUND'));
});
