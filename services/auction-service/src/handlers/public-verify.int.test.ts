import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSigningKeyring, createVerificationKeys, ensureOperator, migrateAccounts } from '@hallmark/accounts';
import { createFilesystemBlobStore } from '@hallmark/blob-store';
import type { Bus } from '@hallmark/bus';
import type { Principal } from '@hallmark/contracts';
import { randomHex } from '@hallmark/crypto';
import { createSqlEventStore, type EventStore } from '@hallmark/event-store';
import { connectTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicFactsCache } from '../public-facts-cache.ts';
import { migrateAuction } from '../store/object-store.ts';
import { type PublicFacts, type PublicVerifyDeps, publicVerify } from './public-verify.ts';
import { recordProvenanceEvent } from './record-event.ts';
import { registerObject } from './register-object.ts';

// The public verification (no key) reads an object's history once per stream version: a repeated
// request for an unchanged object costs one indexed query, and an event appended by any replica
// changes the next answer (docs/AUCTION.md, "Public verification"). Counted on the real database.

/** The database, with every query's text kept. */
function counted(db: SqlDatabase): { db: SqlDatabase; texts: string[] } {
  const texts: string[] = [];
  const wrapped: SqlDatabase = {
    ...db,
    query: (text, params) => {
      texts.push(text);
      return db.query(text, params);
    },
  };
  return { db: wrapped, texts };
}

/** A read of events of one stream from a version on: what reading an object's history is (readStream). */
const isHistoryRead = (text: string) => /FROM events WHERE stream_id = \$1 AND stream_version > \$2/.test(text);

const noBus = { broadcast: async () => {} } as unknown as Bus;

describe('public verification cache (PostgreSQL)', () => {
  let test: Awaited<ReturnType<typeof connectTestDatabase>>;
  let blobDir: string;
  let owner: Principal;
  /** Writes as another replica would: its own event store, not the reader's cache. */
  let writer: { db: SqlDatabase; eventStore: EventStore; clock: () => Date };
  let registerWatch: (title: string) => Promise<string>;
  let note: (serial: string, eventType: string) => Promise<void>;

  /** A public-verification replica over the counted database, with its own cache. */
  async function reader(maxEntries?: number) {
    const { db, texts } = counted(test.db);
    const deps: PublicVerifyDeps = {
      db,
      eventStore: await createSqlEventStore(db),
      clock: () => new Date(),
      keys: createVerificationKeys(db),
      blobs: createFilesystemBlobStore(blobDir),
      publicFacts: createPublicFactsCache<PublicFacts>(maxEntries ? { maxEntries } : {}),
    };
    return {
      deps,
      texts,
      /** Verifies `serial`; the queries it sent, and how many of them read history. */
      async verify(serial: string) {
        const before = texts.length;
        const answer = await publicVerify(deps, serial);
        const sent = texts.slice(before);
        return { answer, queries: sent.length, historyReads: sent.filter(isHistoryRead).length };
      },
    };
  }

  beforeAll(async () => {
    test = await connectTestDatabase('public_verify');
    await migrateAccounts(test.db);
    await migrateAuction(test.db);
    const eventStore = await createSqlEventStore(test.db);
    const bootstrap = await ensureOperator({ db: test.db, eventStore }, `svc_live_${'d'.repeat(64)}`, new Date());
    owner = { accountId: bootstrap.accountId, environment: 'live' };
    blobDir = await mkdtemp(join(tmpdir(), 'hallmark-public-verify-'));
    writer = { db: test.db, eventStore, clock: () => new Date() };
    const keyring = createSigningKeyring(test.db, Buffer.from(randomHex(32), 'hex'));
    registerWatch = async (title) =>
      (
        await registerObject({ ...writer, bus: noBus, keyring, resolverUrl: 'https://id.example' }, owner, {
          title,
          category: 'watch',
          ownerId: 'collector-cache-1',
        })
      ).qr_data.serial;
    note = async (serial, eventType) => {
      await recordProvenanceEvent({ ...writer, evidenceRequiredFor: async () => [] }, owner, {
        objectId: serial,
        eventType,
        actorRole: 'auction_house',
        evidence: { lot: 7 },
      });
    };
  });

  afterAll(async () => {
    await test?.drop();
    if (blobDir) await rm(blobDir, { recursive: true, force: true });
  });

  it('reads an unchanged object’s history once: the next verification is one indexed query and the same answer', async () => {
    const serial = await registerWatch('Cache watch 1');
    await note(serial, 'cataloged');
    const replica = await reader();

    const first = await replica.verify(serial);
    expect(first.historyReads).toBe(1);
    expect(first.answer).toMatchObject({ status: 'authentic', provenance: { event_count: 2, latest_event: 'cataloged' } });

    for (let i = 0; i < 3; i++) {
      const again = await replica.verify(serial);
      expect(again.historyReads).toBe(0);
      // The stream's version, nothing else: not the serial's look-up, not the key (cached), not the history.
      expect(again.queries).toBe(1);
      expect(again.answer).toEqual(first.answer);
    }
  });

  it('answers an event another replica appended at once, reading the history again once', async () => {
    const serial = await registerWatch('Cache watch 2');
    const replica = await reader();
    expect((await replica.verify(serial)).answer.provenance).toMatchObject({ event_count: 1, latest_event: 'registered' });
    expect((await replica.verify(serial)).historyReads).toBe(0);

    await note(serial, 'exhibited');
    const changed = await replica.verify(serial);
    expect(changed.historyReads).toBe(1);
    expect(changed.answer.provenance).toMatchObject({ event_count: 2, latest_event: 'exhibited' });
    expect((await replica.verify(serial)).historyReads).toBe(0);

    await note(serial, 'listed');
    expect((await replica.verify(serial)).answer.provenance).toMatchObject({ event_count: 3, latest_event: 'listed' });
  });

  it('reads the history once for many verifications of an object arriving together', async () => {
    const serial = await registerWatch('Cache watch 3');
    const replica = await reader();
    const before = replica.texts.length;
    const answers = await Promise.all(Array.from({ length: 20 }, () => publicVerify(replica.deps, serial)));
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
    expect(replica.texts.slice(before).filter(isHistoryRead)).toHaveLength(1);
  });

  it('keeps at most its bound of objects, the least recently asked going first', async () => {
    const serials = [
      await registerWatch('Cache watch 4'),
      await registerWatch('Cache watch 5'),
      await registerWatch('Cache watch 6'),
    ];
    const replica = await reader(2);
    for (const serial of serials) await replica.verify(serial);
    expect(replica.deps.publicFacts.size).toBe(2);
    // The first was evicted: read again; the last two were kept.
    expect((await replica.verify(serials[2] as string)).historyReads).toBe(0);
    expect((await replica.verify(serials[0] as string)).historyReads).toBe(1);
  });

  it('finds no object for an unknown serial, and keeps nothing of it', async () => {
    const replica = await reader();
    await expect(publicVerify(replica.deps, 'HM-00000-00000-00000')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(replica.deps.publicFacts.size).toBe(0);
  });
});
