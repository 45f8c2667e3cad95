import type { Principal } from '@hallmark/contracts';
import { createSqlEventStore, type EventStore, ProjectionMovedOn, type StoredEvent } from '@hallmark/event-store';
import { leafHash, referenceRoot } from '@hallmark/merkle';
import { appendToAssetHistory, leafInputOf, startAssetHistory } from '@hallmark/provenance';
import { createPgliteDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerkleProjection, projectEvents, startsEveryAsset } from './merkle-projection.ts';
import { findAssetTree, migrateCompliance } from './store/merkle-store.ts';

// On PGlite in its worker thread (the embedded form), a page of new assets only, which is what
// generation writes, reads no tree and goes to PGlite's thread in one trip; any other page reads
// the trees it extends in a transaction. Both give the roots of RFC 9162's reference tree.

const owner: Principal = { accountId: 'acc_merkle', environment: 'live' };
const now = () => new Date('2026-11-29T00:00:00.000Z');

describe('the Merkle projection on PGlite in its worker thread', () => {
  let db: SqlDatabase;
  let store: EventStore;
  const used: Array<'one trip' | 'transaction'> = [];
  let watched: SqlDatabase;
  let cursor: string | undefined;

  beforeAll(async () => {
    db = await createPgliteDatabase(undefined, { thread: 'worker' });
    store = await createSqlEventStore(db);
    await migrateCompliance(db);
    const runInOneTrip = db.runInOneTrip?.bind(db);
    if (!runInOneTrip) throw new Error('the worker database runs statements in one trip');
    watched = {
      ...db,
      runInOneTrip: (statements) => {
        used.push('one trip');
        return runInOneTrip(statements);
      },
      transaction: (work) => {
        used.push('transaction');
        return db.transaction(work);
      },
    };
  });
  afterAll(async () => {
    await db.close();
  });

  const newAsset = (assetId: string, types: string[]) =>
    store.startStreams([
      startAssetHistory(
        { assetId, owner },
        types.map((type, i) => ({ type, data: { i } })),
        now().toISOString(),
      ),
    ]);

  /** Everything the store holds after the last page read. */
  async function nextPage(): Promise<{ events: StoredEvent[]; cursor: string }> {
    const page = await store.readAll(cursor === undefined ? { limit: 1000 } : { after: cursor, limit: 1000 });
    cursor = page.cursor;
    return page;
  }

  async function expectReferenceRoot(assetId: string) {
    const leaves = (await store.readStream(`asset-${assetId}`)).map((event) =>
      leafHash(leafInputOf((event.metadata.provenance as { hash: string }).hash)),
    );
    const tree = await findAssetTree(db, owner, assetId);
    expect(tree).toMatchObject({ treeSize: leaves.length, rootHash: referenceRoot(leaves) });
  }

  it('writes a page of new assets in one trip, and extends stored trees in a transaction', async () => {
    const projection = createMerkleProjection(watched);
    await projection.checkpoints.load(projection.name);

    await newAsset('code_a', ['code.generated']);
    await newAsset('code_b', ['code.generated']);
    await newAsset('obj_c', ['registered', 'condition_report', 'exhibited']);
    const fresh = await nextPage();
    expect(fresh.events).toHaveLength(5);
    expect(startsEveryAsset(fresh.events)).toBe(true);
    await projection.handle(fresh.events, fresh.cursor);
    expect(used).toEqual(['one trip']);
    for (const assetId of ['code_a', 'code_b', 'obj_c']) await expectReferenceRoot(assetId);

    // obj_c's next two events, code_b's second, and a new asset, in one page: obj_c's tree is read
    // and extended, and code_b's from its root hash (a one-leaf tree's only node).
    for (const type of ['sold', 'transferred']) {
      await appendToAssetHistory(store, { assetId: 'obj_c', owner }, [{ type, data: {} }], { now });
    }
    await appendToAssetHistory(store, { assetId: 'code_b', owner }, [{ type: 'scanned', data: {} }], { now });
    await newAsset('code_d', ['code.generated']);
    const mixed = await nextPage();
    expect(startsEveryAsset(mixed.events)).toBe(false);
    await projection.handle(mixed.events, mixed.cursor);
    expect(used).toEqual(['one trip', 'transaction']);
    for (const assetId of ['obj_c', 'code_b', 'code_d']) await expectReferenceRoot(assetId);
    expect(await findAssetTree(db, owner, 'obj_c')).toMatchObject({ treeSize: 5 });
    expect(await findAssetTree(db, owner, 'code_b')).toMatchObject({ treeSize: 2 });
  });

  it('refuses, as moved on, a page of new assets another replica projected meanwhile', async () => {
    const first = createMerkleProjection(watched);
    const second = createMerkleProjection(watched);
    await first.checkpoints.load(first.name);
    await second.checkpoints.load(second.name);
    await newAsset('code_e', ['code.generated']);
    const page = await nextPage();
    await first.handle(page.events, page.cursor);
    // The second replica is refused at the checkpoint, before its leaves could meet the first's.
    await expect(second.handle(page.events, page.cursor)).rejects.toBeInstanceOf(ProjectionMovedOn);
    await expectReferenceRoot('code_e');
  });

  it('refuses a page of new assets that were projected already, instead of forking their trees', async () => {
    const again = await store.readStream('asset-code_a');
    expect(startsEveryAsset(again)).toBe(true);
    const before = await findAssetTree(db, owner, 'code_a');
    await expect(db.transaction((tx) => projectEvents(tx, again))).rejects.toThrow(/provenance_assets_pkey/);
    expect(await findAssetTree(db, owner, 'code_a')).toEqual(before);
    await expectReferenceRoot('code_a');
  });
});
