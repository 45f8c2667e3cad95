import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createSigningKeyring, migrateAccounts, provisionAccount } from '@hallmark/accounts';
import { auditExport, type ComplianceExportDocument } from '@hallmark/client';
import type { ExportPage, Principal } from '@hallmark/contracts';
import { ed25519Jwk } from '@hallmark/crypto';
import { createSqlEventStore, type EventStore } from '@hallmark/event-store';
import { leafHash, referenceRoot, verifyConsistency, verifyInclusion } from '@hallmark/merkle';
import { appendToAssetHistory, leafInputOf, startAssetHistory } from '@hallmark/provenance';
import { createPostgresDatabase, createTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCheckpointSigner } from './checkpoint-signer.ts';
import { exportPage } from './handlers/export-page.ts';
import { merkleConsistency, merkleProof, merkleRoot } from './handlers/merkle.ts';
import { verifyChain } from './handlers/verify-chain.ts';
import { createMerkleProjection, runMerkleProjection } from './merkle-projection.ts';
import { rebuildMerkleProjection } from './merkle-rebuild.ts';
import { findAssetTree, migrateCompliance } from './store/merkle-store.ts';

let db: SqlDatabase;
let drop: () => Promise<void>;
let databaseUrl: string;
let store: EventStore;
let keyring: ReturnType<typeof createSigningKeyring>;
let deps: { db: SqlDatabase; signCheckpoint: ReturnType<typeof createCheckpointSigner> };
let owner: Principal;
const stranger: Principal = { accountId: 'acc_other', environment: 'live' };
const now = () => new Date('2026-11-21T12:00:00.000Z');

async function newAsset(assetId: string, events: number) {
  await store.startStreams([
    startAssetHistory(
      { assetId, owner },
      [{ type: 'registered', data: { serviceSerial: `SER-${assetId}` } }],
      now().toISOString(),
    ),
  ]);
  for (let i = 1; i < events; i += 1) {
    await appendToAssetHistory(store, { assetId, owner }, [{ type: 'condition_report', data: { i } }], { now });
  }
}

async function projectedSize(assetId: string, size: number) {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const tree = await findAssetTree(db, owner, assetId);
    if (tree && tree.treeSize >= size) return tree;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`asset ${assetId} never reached ${size} events`);
}

async function leavesOf(assetId: string) {
  const events = await store.readStream(`asset-${assetId}`);
  return events.map((event) => leafHash(leafInputOf((event.metadata.provenance as { hash: string }).hash)));
}

async function exportDocument(assetId: string): Promise<ComplianceExportDocument> {
  const pages: ExportPage[] = [await exportPage({ ...deps, eventStore: store }, owner, { assetId, fromLeafIndex: 0 })];
  const first = pages[0] as ExportPage;
  while (pages.at(-1)?.nextLeafIndex != null) {
    const fromLeafIndex = pages.at(-1)?.nextLeafIndex as number;
    pages.push(await exportPage({ ...deps, eventStore: store }, owner, { assetId, treeSize: first.treeSize, fromLeafIndex }));
  }
  return {
    format: 'hallmark.compliance-export/1',
    assetId: first.assetId,
    owner: first.owner,
    treeSize: first.treeSize,
    rootHash: first.rootHash,
    ...(first.checkpoint ? { checkpoint: first.checkpoint } : {}),
    events: pages.flatMap((page) => page.events),
  };
}

const jwks = async () => {
  const key = await keyring.activeSigningKey(owner);
  // As /.well-known/jwks.json publishes it: whose key it is (an audit accepts only the asset's account's).
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

beforeAll(async () => {
  const test = await createTestDatabase('compliance');
  databaseUrl = test.url;
  db = createPostgresDatabase({ connectionString: test.url, applicationName: 'test-compliance' });
  drop = async () => {
    await db.close();
    await test.drop();
  };
  store = await createSqlEventStore(db, { pollIntervalMs: 20 });
  await migrateAccounts(db);
  await migrateCompliance(db);
  const account = await provisionAccount(
    { db, eventStore: store },
    { name: 'Auditor test', tier: 'enterprise', environment: 'live' },
    now(),
  );
  owner = { accountId: account.account.id, environment: 'live' };
  keyring = createSigningKeyring(db, randomBytes(32));
  deps = { db, signCheckpoint: createCheckpointSigner(keyring, 'hallmark', { db }) };
});

afterAll(async () => {
  await drop?.();
});

describe('compliance on PostgreSQL', () => {
  it('chains concurrent appends through optimistic concurrency and projects them on two replicas', async () => {
    const replicas = [0, 1].map(() => runMerkleProjection(store, createMerkleProjection(db), () => {}));
    try {
      await newAsset('obj_race', 1);
      // Two writers append to the same asset at once; neither holds a lock, the store's version check orders them.
      await Promise.all(
        [0, 1].map((writer) =>
          (async () => {
            for (let i = 0; i < 20; i += 1) {
              await appendToAssetHistory(store, { assetId: 'obj_race', owner }, [{ type: 'exhibited', data: { writer, i } }], {
                now,
              });
            }
          })(),
        ),
      );
      await newAsset('obj_many', 37);
      const tree = await projectedSize('obj_race', 41);
      expect(tree.treeSize).toBe(41);
      expect(tree.rootHash).toEqual(referenceRoot(await leavesOf('obj_race')));
      const many = await projectedSize('obj_many', 37);
      expect(many.rootHash).toEqual(referenceRoot(await leavesOf('obj_many')));
      expect(many.alias).toBe('SER-obj_many');
      expect(await verifyChain({ db, eventStore: store, clock: now }, owner, 'obj_race')).toMatchObject({
        isValid: true,
        eventCount: 41,
      });
    } finally {
      await Promise.all(replicas.map((replica) => replica.stop()));
    }
  });

  it('answers roots, proofs and consistency proofs that RFC 9162 verification accepts, by id or serial', async () => {
    const root = await merkleRoot(deps, owner, 'SER-obj_many');
    expect(root).toMatchObject({ assetId: 'obj_many', treeSize: 37 });
    const events = await store.readStream('asset-obj_many');
    for (const index of [0, 17, 36]) {
      const proof = await merkleProof(deps, owner, 'obj_many', events[index]?.eventId as string);
      expect(proof.leafIndex).toBe(index);
      const path = proof.auditPath.map((node) => Buffer.from(node, 'hex'));
      expect(verifyInclusion(index, 37, Buffer.from(proof.leafHash, 'hex'), path, Buffer.from(root.rootHash, 'hex'))).toBe(true);
    }
    const consistency = await merkleConsistency(deps, owner, 'obj_many', 13, 37);
    expect(
      verifyConsistency(
        13,
        37,
        referenceRoot((await leavesOf('obj_many')).slice(0, 13)),
        Buffer.from(root.rootHash, 'hex'),
        consistency.proof.map((node) => Buffer.from(node, 'hex')),
      ),
    ).toBe(true);
    await expect(merkleRoot(deps, stranger, 'obj_many')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(merkleProof(deps, owner, 'obj_race', events[0]?.eventId as string)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(merkleConsistency(deps, owner, 'obj_many', 5, 38)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('exports in pages that the offline checker accepts, and it refuses an altered export', async () => {
    const document = await exportDocument('obj_many');
    const keys = await jwks();
    const report = auditExport(document, keys);
    expect(report).toMatchObject({ valid: true, treeSize: 37, eventsChecked: 37, problems: [] });

    const altered = structuredClone(document);
    (altered.events[5] as { data: Record<string, unknown> }).data = { i: 999 };
    expect(auditExport(altered, keys).problems[0]).toMatch(/^Event 6 .*does not hash/);

    const badProof = structuredClone(document);
    const path = badProof.events[9]?.auditPath as string[];
    path[0] = (path[0] as string).replace(/^./, (c) => (c === '0' ? '1' : '0'));
    expect(auditExport(badProof, keys).problems).toEqual([expect.stringMatching(/^Event 10 .*inclusion proof/)]);

    const dropped = structuredClone(document);
    dropped.events.pop();
    dropped.treeSize = 36; // an unsigned claim: the checker reads the size from the signed checkpoint
    expect(auditExport(dropped, keys).valid).toBe(false);

    const forged = structuredClone(document);
    (forged.checkpoint as { note: string }).note = document.checkpoint?.note.replace('\n37\n', '\n36\n') ?? '';
    expect(auditExport(forged, keys).problems[0]).toMatch(/^Checkpoint: .*does not verify/);
    expect(auditExport(document, { keys: [] }).problems[0]).toMatch(/^Checkpoint: No signature/);
  });

  it('sees an event altered directly in PostgreSQL, and a deleted tail', async () => {
    await db.query(`UPDATE events SET data = '{"i": 4242}' WHERE stream_id = 'asset-obj_many' AND stream_version = 12`);
    const altered = await verifyChain({ db, eventStore: store, clock: now }, owner, 'obj_many');
    const event12 = (await store.readStream('asset-obj_many'))[11];
    expect(altered).toMatchObject({
      isValid: false,
      eventCount: 37,
      brokenAt: { sequence: 12, reason: 'HASH_MISMATCH', eventId: event12?.eventId },
    });

    await db.query(`DELETE FROM events WHERE stream_id = 'asset-obj_race' AND stream_version = 41`);
    const truncated = await verifyChain({ db, eventStore: store, clock: now }, owner, 'obj_race');
    expect(truncated).toMatchObject({ isValid: false, eventCount: 40, brokenAt: { reason: 'LOG_MISMATCH', sequence: 41 } });
    await expect(verifyChain({ db, eventStore: store, clock: now }, stranger, 'obj_race')).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('rebuilds the projection by replay to the identical roots, and never erases a log the events no longer give unless told', async () => {
    const projection = runMerkleProjection(store, createMerkleProjection(db), () => {});
    await newAsset('code_rebuild', 5);
    await newAsset('obj_lagging', 3);
    await projectedSize('code_rebuild', 5);
    await projectedSize('obj_lagging', 3);
    await projection.stop();
    // The log lags behind the events of obj_lagging (the projection stopped before their turn): no difference.
    for (const i of [3, 4])
      await appendToAssetHistory(store, { assetId: 'obj_lagging', owner }, [{ type: 'exhibited', data: { i } }], { now });
    const trees = 'SELECT asset_id, account_id, tree_size, root_hash FROM provenance_assets ORDER BY asset_id';
    const counts = `SELECT (SELECT count(*) FROM merkle_nodes) AS nodes, (SELECT count(*) FROM provenance_events) AS events,
      (SELECT cursor FROM projection_checkpoints WHERE name = 'compliance-merkle') AS checkpoint`;
    const before = await db.query<{ asset_id: string }>(trees);
    const countsBefore = await db.query(counts);
    expect(before.map((row) => row.asset_id)).toEqual(['code_rebuild', 'obj_lagging', 'obj_many', 'obj_race']);

    // obj_race lost its last event in the test before, which its verification reports (LOG_MISMATCH):
    // the rebuild names it and leaves the log as it was, that evidence included.
    const refused = await rebuildMerkleProjection(db, store);
    expect(refused).toMatchObject({
      outcome: 'differs',
      differences: [{ assetId: 'obj_race', loggedSize: 41, rebuiltSize: 40, reason: 'EVENTS_MISSING' }],
    });
    expect(await db.query(trees)).toEqual(before);
    expect(await db.query(counts)).toEqual(countsBefore);
    expect(await db.query(`SELECT 1 FROM pg_namespace WHERE nspname LIKE 'hallmark_merkle_rebuild%'`)).toEqual([]);
    expect(await verifyChain({ db, eventStore: store, clock: now }, owner, 'obj_race')).toMatchObject({
      isValid: false,
      brokenAt: { reason: 'LOG_MISMATCH', sequence: 41 },
    });

    // The operator's command does the same on the configured database: it refuses, naming the asset.
    const hallmark = (...args: string[]) =>
      spawnSync(process.execPath, [fileURLToPath(new URL('../../../apps/hallmark/bin/hallmark.js', import.meta.url)), ...args], {
        env: { ...process.env, HALLMARK_DATABASE_URL: databaseUrl },
        encoding: 'utf8',
      });
    const cliRefused = hallmark('projections', 'rebuild');
    expect(cliRefused.status).toBe(1);
    expect(cliRefused.stderr).toContain('The Merkle log differs from the events for 1 asset; it was left as it was.');
    expect(cliRefused.stderr).toContain('obj_race: the log recorded events the store no longer holds (log 41 leaves, events 40)');
    expect(cliRefused.stderr).toContain('--accept-differences');
    expect(await db.query(trees)).toEqual(before);
    expect(hallmark('projections', 'rebuild', '--accept-difference').status).toBe(2);

    // Told to, it replaces the log: the same roots for the rest, obj_race at the events' 40, obj_lagging caught up.
    const cli = hallmark('projections', 'rebuild', '--accept-differences');
    expect(cli.stderr).toBe('');
    expect(cli.stdout).toMatch(
      /^Rebuilt the Merkle projection from \d+ events in \d+ ms \(replacing the log of 1 asset that differed\)\.\n$/,
    );
    expect(cli.status).toBe(0);
    const after = await db.query<{ asset_id: string }>(trees);
    expect(after.filter((row) => !['obj_race', 'obj_lagging'].includes(row.asset_id))).toEqual(
      before.filter((row) => !['obj_race', 'obj_lagging'].includes(row.asset_id)),
    );
    expect(await findAssetTree(db, owner, 'obj_race')).toMatchObject({ treeSize: 40 });
    expect(await findAssetTree(db, owner, 'obj_lagging')).toMatchObject({
      treeSize: 5,
      rootHash: referenceRoot(await leavesOf('obj_lagging')),
    });
    expect((await db.query(counts))[0]?.checkpoint).not.toBe(countsBefore[0]?.checkpoint);

    // A log that matches replaces itself with identical rows; one that lagged with the same leaves too.
    const leaves = await leavesOf('obj_lagging');
    await db.query(`UPDATE provenance_assets SET tree_size = 3, root_hash = $1 WHERE asset_id = 'obj_lagging'`, [
      referenceRoot(leaves.slice(0, 3)),
    ]);
    expect(await rebuildMerkleProjection(db, store)).toMatchObject({ outcome: 'rebuilt', differences: [] });
    expect(await db.query(trees)).toEqual(after);

    // A log whose recorded root, first leaves or owner the events no longer give is a difference of each kind.
    await db.query(`UPDATE provenance_assets SET root_hash = $1 WHERE asset_id = 'obj_many'`, [randomBytes(32)]);
    await db.query(`UPDATE provenance_assets SET tree_size = 3, root_hash = $1 WHERE asset_id = 'obj_lagging'`, [
      referenceRoot(leaves.slice(1, 4)),
    ]);
    await db.query(`UPDATE provenance_assets SET account_id = 'acc_other' WHERE asset_id = 'code_rebuild'`);
    const changed = await db.query(trees);
    expect(await rebuildMerkleProjection(db, store)).toMatchObject({
      outcome: 'differs',
      differences: [
        { assetId: 'code_rebuild', loggedSize: 5, rebuiltSize: 5, reason: 'OWNER_CHANGED' },
        { assetId: 'obj_lagging', loggedSize: 3, rebuiltSize: 5, reason: 'EVENTS_CHANGED' },
        { assetId: 'obj_many', loggedSize: 37, rebuiltSize: 37, reason: 'EVENTS_CHANGED' },
      ],
    });
    expect(await db.query(trees)).toEqual(changed);
    expect(await rebuildMerkleProjection(db, store, { acceptDifferences: true })).toMatchObject({ outcome: 'rebuilt' });
    expect(await db.query(trees)).toEqual(after);

    // A log that moves on while a run replays (a projection still running writes its next page) is
    // neither compared with a replay that has not seen those events nor replaced.
    const moving: EventStore = {
      ...store,
      async readAll(options) {
        const page = await store.readAll(options);
        if (options?.after === undefined) {
          await db.query(`UPDATE projection_checkpoints SET cursor = cursor || '-moved' WHERE name = 'compliance-merkle'`);
        }
        return page;
      },
    };
    await db.query(`UPDATE provenance_assets SET root_hash = $1 WHERE asset_id = 'obj_many'`, [randomBytes(32)]);
    const movedLog = await db.query(trees);
    expect(await rebuildMerkleProjection(db, moving, { acceptDifferences: true })).toMatchObject({ outcome: 'moved' });
    expect(await db.query(trees)).toEqual(movedLog);

    // Two runs at once each replay into a schema of their own: whichever replaces the log replaces it whole.
    const runs = await Promise.all([0, 1].map(() => rebuildMerkleProjection(db, store, { acceptDifferences: true })));
    expect(runs.map((run) => run.outcome)).toContain('rebuilt');
    expect(await db.query(trees)).toEqual(after);
    expect(await db.query(`SELECT 1 FROM pg_namespace WHERE nspname LIKE 'hallmark_merkle_rebuild%'`)).toEqual([]);
  });
});
