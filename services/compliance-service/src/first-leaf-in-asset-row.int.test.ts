import { fileURLToPath } from 'node:url';
import { createSigningKeyring, migrateAccounts, provisionAccount } from '@hallmark/accounts';
import { auditExport } from '@hallmark/client';
import { ed25519Jwk } from '@hallmark/crypto';
import { createSqlEventStore, type EventStore } from '@hallmark/event-store';
import {
  appendLeaves,
  type Hash,
  leafHash,
  mapLookup,
  referenceInclusionProof,
  referenceRoot,
  verifyConsistency,
  verifyInclusion,
} from '@hallmark/merkle';
import { appendToAssetHistory, leafInputOf, startAssetHistory } from '@hallmark/provenance';
import { connectTestDatabase, createPgliteDatabase, loadMigrations, runMigrations, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCheckpointSigner } from './checkpoint-signer.ts';
import { exportPage } from './handlers/export-page.ts';
import { merkleConsistency, merkleProof, merkleRoot } from './handlers/merkle.ts';
import { verifyChain } from './handlers/verify-chain.ts';
import { createMerkleProjection, projectEvents } from './merkle-projection.ts';
import { rebuildMerkleProjection } from './merkle-rebuild.ts';
import { findAssetTree, migrateCompliance } from './store/merkle-store.ts';

// Migration 0005: a one-leaf tree (a generated code's) is stored as its asset row alone, its leaf as
// root_hash and its event as first_event_id, with no merkle_nodes or provenance_events row; node
// (0, 0) is written when the tree grows. Trees stored before keep their rows. Every root and proof
// stays RFC 9162's.

const now = () => new Date('2026-12-01T09:00:00.000Z');

interface Fixture {
  db: SqlDatabase;
  store: EventStore;
  owner: { accountId: string; environment: 'live' };
  deps: { db: SqlDatabase; signCheckpoint: ReturnType<typeof createCheckpointSigner> };
  jwks: () => Promise<{ keys: object[] }>;
}

/** An event store, accounts and one signing tenant on `db`; the compliance tables are the caller's. */
async function openFixture(db: SqlDatabase): Promise<Fixture> {
  const store = await createSqlEventStore(db);
  await migrateAccounts(db);
  const account = await provisionAccount(
    { db, eventStore: store },
    { name: 'First leaf', tier: 'enterprise', environment: 'live' },
    now(),
  );
  const owner = { accountId: account.account.id, environment: 'live' as const };
  const keyring = createSigningKeyring(db, Buffer.alloc(32, 7));
  const jwks = async () => {
    const key = await keyring.activeSigningKey(owner);
    return {
      keys: [
        {
          ...ed25519Jwk(key.publicKey, key.kid),
          hallmark_account: owner.accountId,
          hallmark_key_type: 'signing',
          hallmark_environment: owner.environment,
        },
      ],
    };
  };
  return { db, store, owner, deps: { db, signCheckpoint: createCheckpointSigner(keyring, 'hallmark', { db }) }, jwks };
}

const startAsset = (f: Fixture, assetId: string, types: readonly string[]) =>
  f.store.startStreams([
    startAssetHistory(
      { assetId, owner: f.owner },
      types.map((type, i) => ({ type, data: { i } })),
      now().toISOString(),
    ),
  ]);

const appendEvent = (f: Fixture, assetId: string, type: string) =>
  appendToAssetHistory(f.store, { assetId, owner: f.owner }, [{ type, data: {} }], { now });

/**
 * Projects the events stored after the projection's checkpoint, page by page, until it has projected
 * the last event of `assetId`. On PostgreSQL an older transaction in flight that may write to the
 * events holds `readAll`'s readable horizon back (the event store's readHorizon), so a page that does
 * not reach that event yet waits 20 ms and reads on from the checkpoint. Fails after 10 s.
 */
async function projectThrough(f: Fixture, assetId: string): Promise<void> {
  const last = (await f.store.readStream(`asset-${assetId}`)).at(-1);
  if (!last) throw new Error(`no stream asset-${assetId}`);
  const projection = createMerkleProjection(f.db);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const cursor = await projection.checkpoints.load(projection.name);
    const page = await f.store.readAll(cursor === undefined ? { limit: 1000 } : { after: cursor, limit: 1000 });
    if (page.events.length > 0) await projection.handle(page.events, page.cursor);
    if (page.events.some((event) => event.eventId === last.eventId)) return;
    if (Date.now() > deadline) throw new Error(`readAll never reached the last event of asset-${assetId}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function leavesOf(f: Fixture, assetId: string): Promise<Hash[]> {
  return (await f.store.readStream(`asset-${assetId}`)).map((event) =>
    leafHash(leafInputOf((event.metadata.provenance as { hash: string }).hash)),
  );
}

/** An asset's merkle_nodes and provenance_events rows (the tables before and after 0005 have). */
async function nodeAndEventRows(db: SqlDatabase, assetId: string) {
  const nodes = await db.query<{ level: number; idx: string | number; hash: Uint8Array }>(
    'SELECT level, idx, hash FROM merkle_nodes WHERE asset_id = $1 ORDER BY level, idx',
    [assetId],
  );
  const events = await db.query<{ event_id: string; leaf_index: string | number }>(
    'SELECT event_id, leaf_index FROM provenance_events WHERE asset_id = $1 ORDER BY leaf_index',
    [assetId],
  );
  return {
    nodes: nodes.map((n) => ({ node: `${n.level}:${Number(n.idx)}`, hash: Buffer.from(n.hash).toString('hex') })),
    laterEvents: events.map((e) => ({ eventId: e.event_id, leafIndex: Number(e.leaf_index) })),
  };
}

/** What the projection stores for an asset besides its root: its named first event, nodes and later events. */
async function storedRows(db: SqlDatabase, assetId: string) {
  const [asset] = await db.query<{ first_event_id: string | null }>(
    'SELECT first_event_id FROM provenance_assets WHERE asset_id = $1',
    [assetId],
  );
  return { firstEventId: asset?.first_event_id, ...(await nodeAndEventRows(db, assetId)) };
}

const nodeNames = (rows: Awaited<ReturnType<typeof storedRows>>) => rows.nodes.map((n) => n.node);

/** The asset's root and every event's inclusion proof are what RFC 9162's reference tree gives, and verify. */
async function expectProvesEveryEvent(f: Fixture, assetId: string): Promise<void> {
  const leaves = await leavesOf(f, assetId);
  const root = await merkleRoot(f.deps, f.owner, assetId);
  expect(root).toMatchObject({ treeSize: leaves.length, rootHash: referenceRoot(leaves).toString('hex') });
  const events = await f.store.readStream(`asset-${assetId}`);
  for (const [index, event] of events.entries()) {
    const proof = await merkleProof(f.deps, f.owner, assetId, event.eventId);
    const path = referenceInclusionProof(index, leaves);
    expect(proof).toMatchObject({
      leafIndex: index,
      treeSize: leaves.length,
      leafHash: leaves[index]?.toString('hex'),
      auditPath: path.map((hash) => hash.toString('hex')),
    });
    expect(verifyInclusion(index, leaves.length, leaves[index] as Hash, path, referenceRoot(leaves))).toBe(true);
  }
  expect(await verifyChain({ db: f.db, eventStore: f.store, clock: now }, f.owner, assetId)).toMatchObject({
    isValid: true,
    eventCount: leaves.length,
  });
}

describe('one-leaf trees on PostgreSQL', () => {
  let f: Fixture;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const database = await connectTestDatabase('first_leaf');
    drop = database.drop;
    f = await openFixture(database.db);
    await migrateCompliance(f.db);
  });
  afterAll(async () => {
    await drop?.();
  });

  it('stores a generated code as its asset row alone, and proves, verifies and exports its event', async () => {
    // Given two generated codes, projected
    await startAsset(f, 'code_one', ['code.generated']);
    await startAsset(f, 'code_two', ['code.generated']);
    await projectThrough(f, 'code_two');

    // Then its tree is its row: the leaf is the root hash, the event its first_event_id
    const [event] = await f.store.readStream('asset-code_one');
    expect(await storedRows(f.db, 'code_one')).toEqual({ firstEventId: event?.eventId, nodes: [], laterEvents: [] });
    expect((await findAssetTree(f.db, f.owner, 'code_one'))?.rootHash).toEqual((await leavesOf(f, 'code_one'))[0]);

    // And its root, proof, chain check and consistency proof hold as RFC 9162 says
    await expectProvesEveryEvent(f, 'code_one');
    expect(await merkleProof(f.deps, f.owner, 'code_one', event?.eventId as string)).toMatchObject({ auditPath: [] });
    expect(await merkleConsistency(f.deps, f.owner, 'code_one', 1)).toMatchObject({ fromSize: 1, toSize: 1, proof: [] });

    // And an auditor's offline check accepts its export
    const page = await exportPage({ ...f.deps, eventStore: f.store }, f.owner, { assetId: 'code_one', fromLeafIndex: 0 });
    const document = { format: 'hallmark.compliance-export/1' as const, ...page };
    expect(auditExport(document, await f.jwks())).toMatchObject({ valid: true, treeSize: 1, eventsChecked: 1, problems: [] });
  });

  it('finds no leaf for another asset’s first event, nor for an event id that is not a UUID', async () => {
    // Given two generated codes (the test before)
    const [other] = await f.store.readStream('asset-code_two');

    // When a proof of code_one is asked for with code_two's event, or with ids that are no UUIDs
    for (const eventId of [other?.eventId as string, 'not-a-uuid', "1' OR '1'='1", '']) {
      // Then the event is not in code_one's history: NOT_FOUND, never a server error
      await expect(merkleProof(f.deps, f.owner, 'code_one', eventId)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    }
  });

  it('grows a tree from 1 to 2 to 3 leaves across pages to RFC 9162’s roots and proofs, and to one page’s rows', async () => {
    // Given an asset projected with one event per page
    await startAsset(f, 'obj_grow', ['registered']);
    await projectThrough(f, 'obj_grow');
    const sizes: Array<{ size: number; root: Buffer; nodes: string[] }> = [];
    const record = async () => {
      const tree = await findAssetTree(f.db, f.owner, 'obj_grow');
      sizes.push({
        size: tree?.treeSize ?? 0,
        root: tree?.rootHash as Buffer,
        nodes: nodeNames(await storedRows(f.db, 'obj_grow')),
      });
      await expectProvesEveryEvent(f, 'obj_grow');
    };
    await record();
    for (const type of ['exhibited', 'sold']) {
      await appendEvent(f, 'obj_grow', type);
      await projectThrough(f, 'obj_grow');
      await record();
    }

    // Then leaf 0 enters merkle_nodes only when the tree grows past it, and each root is the reference root
    const leaves = await leavesOf(f, 'obj_grow');
    expect(sizes.map(({ size, nodes }) => ({ size, nodes }))).toEqual([
      { size: 1, nodes: [] },
      { size: 2, nodes: ['0:0', '0:1', '1:0'] },
      { size: 3, nodes: ['0:0', '0:1', '0:2', '1:0'] },
    ]);
    for (const { size, root } of sizes) expect(root).toEqual(referenceRoot(leaves.slice(0, size)));
    for (const from of [1, 2]) {
      const consistency = await merkleConsistency(f.deps, f.owner, 'obj_grow', from, 3);
      const proof = consistency.proof.map((hash) => Buffer.from(hash, 'hex'));
      expect(verifyConsistency(from, 3, referenceRoot(leaves.slice(0, from)), referenceRoot(leaves), proof)).toBe(true);
    }
    const [first, ...later] = await f.store.readStream('asset-obj_grow');
    const paged = await storedRows(f.db, 'obj_grow');
    expect(paged.firstEventId).toBe(first?.eventId);
    expect(paged.laterEvents).toEqual(later.map((event, i) => ({ eventId: event.eventId, leafIndex: i + 1 })));

    // When the projection is rebuilt, which takes all three events in one page (0 to 3 leaves)
    expect(await rebuildMerkleProjection(f.db, f.store)).toMatchObject({ outcome: 'rebuilt', differences: [] });

    // Then the asset has the same row, nodes and events, hence the same root and proofs
    expect(await storedRows(f.db, 'obj_grow')).toEqual(paged);
    expect((await findAssetTree(f.db, f.owner, 'obj_grow'))?.rootHash).toEqual(sizes[2]?.root);
    await expectProvesEveryEvent(f, 'obj_grow');
  });

  it('refuses a first page projected again for a tree that has grown since, instead of cutting it back', async () => {
    // Given a code projected at one leaf that has grown to two
    await startAsset(f, 'code_replayed', ['code.generated']);
    await projectThrough(f, 'code_replayed');
    const [first] = await f.store.readStream('asset-code_replayed');
    await appendEvent(f, 'code_replayed', 'scanned');
    await projectThrough(f, 'code_replayed');
    const grown = await findAssetTree(f.db, f.owner, 'code_replayed');
    expect(grown?.treeSize).toBe(2);

    // When its first page (its first event alone, a page that reads no tree) is projected again
    const replay = f.db.transaction((tx) => projectEvents(tx, [first as NonNullable<typeof first>]));

    // Then the asset row's key refuses it, and the tree keeps both leaves
    await expect(replay).rejects.toThrow(/provenance_assets_pkey/);
    expect(await findAssetTree(f.db, f.owner, 'code_replayed')).toEqual(grown);
    await expectProvesEveryEvent(f, 'code_replayed');
  });
});

const databases: Array<[string, () => Promise<{ db: SqlDatabase; drop(): Promise<void> }>]> = [
  ['PostgreSQL', () => connectTestDatabase('first_leaf_migration')],
  [
    'PGlite',
    async () => {
      const db = await createPgliteDatabase();
      return { db, drop: () => db.close() };
    },
  ],
];

describe.each(databases)('migration 0005 on %s, over trees the projection stored before it', (_name, connect) => {
  let f: Fixture;
  let drop: () => Promise<void>;
  let before: Map<string, Awaited<ReturnType<typeof nodeAndEventRows>>>;
  const assets = {
    code_m: ['code.generated'],
    obj_m: ['registered', 'exhibited', 'sold'],
    obj_five: ['registered', 'a', 'b', 'c', 'd'],
  };

  /** The rows the projection wrote before 0005: every node, every event in provenance_events. */
  async function projectAsBefore(assetId: string): Promise<void> {
    const events = await f.store.readStream(`asset-${assetId}`);
    const leaves = await leavesOf(f, assetId);
    const nodes = appendLeaves(0, leaves, mapLookup(new Map()));
    for (const node of nodes) {
      await f.db.query('INSERT INTO merkle_nodes (asset_id, level, idx, hash) VALUES ($1, $2, $3, $4)', [
        assetId,
        node.level,
        node.index,
        node.hash,
      ]);
    }
    for (const [index, event] of events.entries()) {
      await f.db.query('INSERT INTO provenance_events (event_id, asset_id, leaf_index) VALUES ($1, $2, $3)', [
        event.eventId,
        assetId,
        index,
      ]);
    }
    await f.db.query(
      `INSERT INTO provenance_assets (asset_id, account_id, environment, tree_size, root_hash) VALUES ($1, $2, $3, $4, $5)`,
      [assetId, f.owner.accountId, f.owner.environment, leaves.length, referenceRoot(leaves)],
    );
  }

  beforeAll(async () => {
    const database = await connect();
    drop = database.drop;
    f = await openFixture(database.db);
    const all = await loadMigrations('compliance-service', fileURLToPath(new URL('../migrations', import.meta.url)));
    // Given the compliance tables as they were before 0005, holding a one-leaf tree and two larger ones
    await runMigrations(f.db, { ...all, migrations: all.migrations.filter((migration) => migration.version <= 4) });
    for (const [assetId, types] of Object.entries(assets)) {
      await startAsset(f, assetId, types);
      await projectAsBefore(assetId);
    }
    before = new Map();
    for (const assetId of Object.keys(assets)) before.set(assetId, await nodeAndEventRows(f.db, assetId));

    // When 0005 runs
    await runMigrations(f.db, all);
  });
  afterAll(async () => {
    await drop?.();
  });

  it('leaves the trees stored before as they were (only the column is new), for this release and the one before', async () => {
    for (const assetId of Object.keys(assets)) {
      const migrated = await storedRows(f.db, assetId);
      expect(migrated.firstEventId).toBeNull();
      expect({ nodes: migrated.nodes, laterEvents: migrated.laterEvents }).toEqual(before.get(assetId));
    }
    expect(before.get('code_m')?.nodes).toHaveLength(1);
    expect(before.get('obj_five')?.laterEvents).toHaveLength(5);
  });

  it('proves every event as RFC 9162 says, as before', async () => {
    for (const assetId of Object.keys(assets)) await expectProvesEveryEvent(f, assetId);
  });

  it('grows a one-leaf tree stored before, keeping the leaf it has', async () => {
    // Given the one-leaf code stored before 0005, when it gains an event that the projection adds
    const [added] = await appendEvent(f, 'code_m', 'scanned');
    await f.db.transaction((tx) => projectEvents(tx, [added as NonNullable<typeof added>]));

    // Then its leaf 0 stays beside the new nodes, and its root and proofs are the reference tree's
    expect(nodeNames(await storedRows(f.db, 'code_m'))).toEqual(['0:0', '0:1', '1:0']);
    await expectProvesEveryEvent(f, 'code_m');
  });

  it('stores a tree started after 0005 in the new layout beside the old ones', async () => {
    await startAsset(f, 'code_new', ['code.generated']);
    const [first] = await f.store.readStream('asset-code_new');
    await f.db.transaction((tx) => projectEvents(tx, [first as NonNullable<typeof first>]));
    expect(await storedRows(f.db, 'code_new')).toEqual({ firstEventId: first?.eventId, nodes: [], laterEvents: [] });
    await expectProvesEveryEvent(f, 'code_new');
  });

  it('grows a one-leaf tree that the release before projected after 0005 ran (a rolling update)', async () => {
    // Given a code that a compliance-service of the release before projected after the migration:
    // its leaf in merkle_nodes, its event in provenance_events, no first_event_id
    await startAsset(f, 'code_rolling', ['code.generated']);
    await projectAsBefore('code_rolling');
    expect(await storedRows(f.db, 'code_rolling')).toMatchObject({ firstEventId: null, nodes: [{ node: '0:0' }] });
    await expectProvesEveryEvent(f, 'code_rolling');

    // When this release's projection adds its second event
    const [added] = await appendEvent(f, 'code_rolling', 'scanned');
    await f.db.transaction((tx) => projectEvents(tx, [added as NonNullable<typeof added>]));

    // Then the leaf already stored is kept (not a key violation that would stop the projection), and
    // the tree proves every event as RFC 9162 says
    expect(nodeNames(await storedRows(f.db, 'code_rolling'))).toEqual(['0:0', '0:1', '1:0']);
    await expectProvesEveryEvent(f, 'code_rolling');
  });
});
