import { migrateAccounts } from '@hallmark/accounts';
import { createSqlEventStore } from '@hallmark/event-store';
import { createPgliteDatabase } from '@hallmark/sql';
import { describe, expect, it } from 'vitest';
import { migrateCodes } from '../store/code-store.ts';
import { createSchemaCatalog } from './schemas.ts';

// A version stored before its definition was checked as it is now (a field named `__proto__` was
// taken, then every validation and generation naming the schema was a 500, outside any catch).
describe('a stored schema version no validator can be made of', () => {
  it('answers CONFLICT naming the field on validate, and refuses the generation item, never a 500', async () => {
    const db = await createPgliteDatabase();
    await migrateAccounts(db);
    await migrateCodes(db);
    const eventStore = await createSqlEventStore(db);
    const catalog = createSchemaCatalog({ db, eventStore, clock: () => new Date() });
    const owner = { accountId: 'acc_stored', environment: 'live' as const };
    const schema = await catalog.create(owner, {
      name: 'Old',
      vertical: 'luxury',
      fields: [{ name: 'box', type: 'object', fields: [{ name: 'size', type: 'number' }] }],
    });
    await db.query(`UPDATE metadata_schema_versions SET fields = $2 WHERE schema_id = $1`, [
      schema.id,
      JSON.stringify([{ name: 'box', type: 'object', fields: [{ name: '__proto__', type: 'string', required: true }] }]),
    ]);

    await expect(catalog.validate(owner, schema.id, undefined, { box: {} })).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining(`PATCH /schemas/${schema.id}`),
      details: { id: schema.id, version: 1, fields: [{ field: 'fields.box.__proto__', message: expect.any(String) }] },
    });
    const generation = await catalog.validateForGeneration(owner, schema.id, undefined, { box: {} });
    expect(generation).toMatchObject({
      missing: false,
      schemaId: schema.id,
      version: 1,
      isValid: false,
      errors: [{ field: '(schema)', message: expect.stringContaining('box.__proto__') }],
    });

    // A PATCH with good fields makes it usable again.
    await catalog.update(owner, schema.id, { fields: [{ name: 'size', type: 'number' }] });
    expect(await catalog.validate(owner, schema.id, undefined, { size: 1 })).toMatchObject({ isValid: true, version: 2 });
    await db.close();
  });
});
