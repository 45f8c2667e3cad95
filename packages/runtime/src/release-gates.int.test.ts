import { randomUUID } from 'node:crypto';
import { createSqlEventStore } from '@hallmark/event-store';
import { createPostgresDatabase, createTestDatabase, type SqlDatabase, type TestDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyFormsGate, createLinkFormsGate, createPacksGate, sessionNameOf } from './release-gates.ts';

// A rolling update from a release of 2026-12-05 or before runs its processes beside this release's:
// their projections read the events table only, and would read past event packs (event store
// migration 0003) without projecting their codes, for good. code-service packs only while no
// session of such a process (its bare service name) is connected to the database. Likewise a
// code-service of 2026-12-06 or before reads a code's link from its row only: new rows name their
// link form (code-service migration 0009) only while none of its sessions is connected.

let database: TestDatabase;
let db: SqlDatabase;

beforeAll(async () => {
  database = await createTestDatabase('packs_gate');
  db = createPostgresDatabase({ connectionString: database.url, applicationName: sessionNameOf('code-service') });
  await db.query('CREATE TABLE started_rows (key text PRIMARY KEY)');
});
afterAll(async () => {
  await db?.close();
  await database?.drop();
});

/**
 * Opens a session named `applicationName`, and closes it with `close`, which returns once its
 * backend has left pg_stat_activity: a closed client's backend is listed there a moment longer,
 * and a gate asked in that moment still sees it.
 */
async function openSession(applicationName: string): Promise<{ close: () => Promise<void> }> {
  const session = createPostgresDatabase({ connectionString: database.url, applicationName });
  const [row] = await session.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return {
    close: async () => {
      await session.close();
      for (let waited = 0; ; waited += 10) {
        const [listed] = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM pg_stat_activity WHERE pid = $1', [
          row?.pid,
        ]);
        if (listed?.n === '0') return;
        if (waited > 10_000) throw new Error(`the backend of ${applicationName} is still listed 10 s after its close`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
  };
}

/** Starts `count` new streams with a row each, through a store that asks `gate`; where their first events went. */
async function startThrough(gate: () => Promise<boolean>, count: number): Promise<{ rows: number; packed: number }> {
  const store = await createSqlEventStore(db, { packFirstEvents: gate });
  const streams = Array.from({ length: count }, () => ({ key: randomUUID(), streamId: `asset-gate-${randomUUID()}` }));
  await store.startStreamsWithRows?.(
    streams.map(({ key, streamId }) => ({ key, streamId, events: [{ type: 'code.generated', data: {} }] })),
    { db, text: 'INSERT INTO started_rows (key) SELECT unnest($1::text[]) RETURNING key', params: [streams.map((s) => s.key)] },
  );
  const ids = streams.map((stream) => stream.streamId);
  const [counts] = await db.query<{ rows: string; packed: string }>(
    `SELECT (SELECT count(*) FROM events WHERE stream_id = ANY($1::text[]))::text AS rows,
            (SELECT count(*) FROM packed_streams WHERE stream_id = ANY($1::text[]))::text AS packed`,
    [ids],
  );
  return { rows: Number(counts?.rows), packed: Number(counts?.packed) };
}

describe('the packs gate (a rolling update from a release that reads no packs)', () => {
  it('writes rows while a process of such a release is connected, and packs once it has gone', async () => {
    const gate = createPacksGate(db, { recheckMs: 0 });
    expect(await startThrough(gate, 3)).toEqual({ rows: 0, packed: 3 });

    // A compliance-service of the release before: its sessions carry its bare service name.
    const older = await openSession('compliance-service');
    try {
      expect(await gate()).toBe(false);
      expect(await startThrough(gate, 3)).toEqual({ rows: 3, packed: 0 });
    } finally {
      await older.close();
    }
    // Its session is gone: packs again.
    expect(await startThrough(gate, 3)).toEqual({ rows: 0, packed: 3 });
  });

  /** What `gate` answers while a session named `applicationName` is connected to the database. */
  async function gateWhileConnected(gate: () => Promise<boolean>, applicationName: string): Promise<boolean> {
    const session = await openSession(applicationName);
    try {
      return await gate();
    } finally {
      await session.close();
    }
  }

  it('shuts the link forms gate while a code-service of a release before them is connected, and only then', async () => {
    const gate = createLinkFormsGate(db, { recheckMs: 0 });
    expect(sessionNameOf('code-service')).toBe('hallmark/code-service/3');
    expect(await gate()).toBe(true);
    for (const older of ['hallmark/code-service', 'code-service'])
      expect(await gateWhileConnected(gate, older), older).toBe(false);
    // Another service of the release before (it reads no codes) leaves it open.
    expect(await gateWhileConnected(gate, 'hallmark/verify-service')).toBe(true);
    const failing = { ...db, query: async () => Promise.reject(new Error('the database is away')) } as unknown as SqlDatabase;
    expect(await createLinkFormsGate(failing)()).toBe(false);
  });

  it('shuts a service’s key forms gate while a process of that service of a release before them is connected', async () => {
    for (const service of ['code-service', 'verify-service'] as const) {
      const gate = createKeyFormsGate(db, service, { recheckMs: 0 });
      expect(await gate()).toBe(true);
      for (const older of [service, `hallmark/${service}`, `hallmark/${service}/2`]) {
        expect(await gateWhileConnected(gate, older), older).toBe(false);
      }
      // This release's sessions, and another service's of the release before, leave it open.
      const other = service === 'code-service' ? 'verify-service' : 'code-service';
      for (const name of [sessionNameOf(service), `hallmark/${other}/2`])
        expect(await gateWhileConnected(gate, name), name).toBe(true);
    }
  });

  it('asks the database at most once per recheck interval, and answers rows when it cannot ask', async () => {
    let asked = 0;
    const counting: SqlDatabase = {
      ...db,
      query: async (...args: Parameters<SqlDatabase['query']>) => {
        asked += 1;
        return db.query(...args);
      },
    } as SqlDatabase;
    const gate = createPacksGate(counting, { recheckMs: 60_000 });
    expect(await Promise.all([gate(), gate(), gate()])).toEqual([true, true, true]);
    expect(asked).toBe(1);

    const failing = { ...db, query: async () => Promise.reject(new Error('the database is away')) } as unknown as SqlDatabase;
    expect(await createPacksGate(failing)()).toBe(false);
  });
});
