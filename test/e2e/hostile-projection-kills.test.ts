// Review (2026-12-05) of the compliance evidence against "a process killed mid-write" and "an
// operator under pressure": the Merkle projection (services/compliance-service/src/merkle-projection.ts),
// its rebuild (merkle-rebuild.ts, `hallmark projections rebuild`) and read-your-writes
// (projection-wait.ts), over real HTTP through the gateway, with real PostgreSQL and NATS in the
// distributed form and the real `hallmark start` (PGlite) in the embedded form.
//
// From a review of 2026-12-05, whose findings were fixed in merkle-rebuild.ts: two overlapping runs
// shared one apart schema, so one swapped the other's half-built log in (every tree past its first
// page gone, the checkpoint at the end); and a rebuild compared the live log, which a running
// compliance-service may have moved past the replay, naming a genuine write as missing. Now each
// run has its own schema, and the log is compared and replaced only if its checkpoint did not move
// since the run began ('moved' otherwise). The kills lost, doubled or reordered nothing.
// A long run (`pnpm test:long`): it kills processes under load for about a minute and a half.
//
// Every expected value is computed here from the events themselves (their chain fields in the event
// store, or an export's contents rehashed: RFC 8785 + SHA-256 + the RFC 9162 reference tree), never
// taken from what the service says of itself.
import { randomUUID } from 'node:crypto';
import { type LogDifference, rebuildMerkleProjection } from '@hallmark/compliance-service';
import { createSqlEventStore } from '@hallmark/event-store';
import { leafHash, referenceInclusionProof, referenceRoot } from '@hallmark/merkle';
import { hashProvenanceRecord, leafInputOf } from '@hallmark/provenance';
import { createPostgresDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call } from '../support/embedded.ts';
import { runHallmark } from '../support/hallmark-cli.ts';
import { cleanUp, kill, newDataDir, startServer, tenant } from '../support/killed-product.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const gtin = '09506000134352';
const api = (url: string, key: string | undefined, method: string, path: string, body?: unknown) =>
  call<Json>(url, method, `/api/v1${path}`, { ...(key ? { key } : {}), ...(body !== undefined ? { body } : {}) });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// Load: what the writers were told (every 2xx), to be found afterwards.

interface Acks {
  /** objectId -> event ids answered 201, in the order the answers came. */
  events: Map<string, string[]>;
  /** Asset ids of codes answered 2xx. */
  codes: string[];
  statuses: Map<string, number>;
}

function newAcks(objects: readonly string[]): Acks {
  return { events: new Map(objects.map((id) => [id, []])), codes: [], statuses: new Map() };
}

const count = (acks: Acks, what: string) => acks.statuses.set(what, (acks.statuses.get(what) ?? 0) + 1);

/**
 * Writers until `stop()`: one per object appending provenance events, one generating batches of
 * codes, one generating single codes. A writer whose server is gone (fetch failed) pauses and goes on.
 */
function startLoad(urlOf: () => string, key: string, objects: readonly string[], acks: Acks, tag: string) {
  let stopping = false;
  let n = 0;
  const loop = async (work: () => Promise<void>) => {
    while (!stopping) {
      try {
        await work();
      } catch {
        count(acks, 'fetch failed');
        await sleep(50);
      }
    }
  };
  const workers = [
    ...objects.map((objectId) =>
      loop(async () => {
        const answer = await api(urlOf(), key, 'POST', '/auction/provenance/events', {
          objectId,
          eventType: 'cataloged',
          actorRole: 'auction_house',
          description: `${tag} note ${n++}`,
        });
        count(acks, `event ${answer.status}`);
        if (answer.status === 201) acks.events.get(objectId)?.push(answer.body.eventId as string);
        else await sleep(20);
      }),
    ),
    loop(async () => {
      const prefix = `${tag}-B${n++}-${randomUUID().slice(0, 4)}`;
      const items = Array.from({ length: 25 }, (_, i) => ({ gtin, serialNumber: `${prefix}-${i}` }));
      const answer = await api(urlOf(), key, 'POST', '/code/generate/batch', { items });
      count(acks, `batch ${answer.status}`);
      if (answer.status === 200) {
        for (const result of answer.body.results as Json[]) if (result.code) acks.codes.push(result.code.assetId as string);
      } else await sleep(20);
    }),
    loop(async () => {
      const answer = await api(urlOf(), key, 'POST', '/code/generate', {
        gtin,
        serialNumber: `${tag}-S${n++}-${randomUUID().slice(0, 6)}`,
      });
      count(acks, `code ${answer.status}`);
      if (answer.status === 201) acks.codes.push(answer.body.assetId as string);
      else await sleep(20);
    }),
  ];
  return {
    async stop() {
      stopping = true;
      await Promise.all(workers);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Checks over HTTP.

/** An export's leaves, each event's hash recomputed from its content and each link checked; problems noted. */
function leavesOf(document: Json, problems: string[]): Buffer[] {
  let prevHash: string | null = null;
  return (document.events as Json[]).map((event, index) => {
    if (event.sequence !== index + 1) problems.push(`${document.assetId}: event ${index} has sequence ${event.sequence}`);
    if (event.leafIndex !== index) problems.push(`${document.assetId}: event ${index} has leafIndex ${event.leafIndex}`);
    if (event.prevHash !== prevHash) problems.push(`${document.assetId}: event ${index + 1} links to ${event.prevHash}`);
    const hash = hashProvenanceRecord({
      assetId: document.assetId,
      accountId: document.owner.accountId,
      environment: document.owner.environment,
      sequence: event.sequence,
      type: event.type,
      occurredAt: event.occurredAt,
      data: event.data,
      prevHash,
    });
    if (hash !== event.hash) problems.push(`${document.assetId}: event ${index + 1} does not hash to its hash`);
    prevHash = hash;
    return leafHash(leafInputOf(hash));
  });
}

/** A read that may wait for the projection after a restart: 503 is retried, anything else returned. */
async function settled(url: string, key: string, path: string): Promise<{ status: number; body: Json }> {
  return waitFor(
    `GET ${path}`,
    async () => {
      const answer = await api(url, key, 'GET', path).catch(() => undefined);
      return answer === undefined || answer.status === 503 ? undefined : answer;
    },
    { timeoutMs: 20_000, intervalMs: 200 },
  );
}

/**
 * One object after the fact: every acknowledged event in its export exactly once, leaves 0..n-1 in
 * sequence, the root that of the events' own hashes (export, merkle/root and the signed note), the
 * chain check valid with n events, and proofs that are the reference tree's audit paths.
 */
async function checkObject(url: string, key: string, objectId: string, acked: readonly string[]): Promise<string[]> {
  const problems: string[] = [];
  const exported = await settled(url, key, `/compliance/${objectId}/export?format=json`);
  if (exported.status !== 200) return [`${objectId}: export ${exported.status} ${JSON.stringify(exported.body).slice(0, 200)}`];
  const document = exported.body;
  const leaves = leavesOf(document, problems);
  const ids = (document.events as Json[]).map((event) => event.eventId as string);
  if (new Set(ids).size !== ids.length) problems.push(`${objectId}: an event id appears twice in the export`);
  const missing = acked.filter((id) => !ids.includes(id));
  if (missing.length > 0)
    problems.push(`${objectId}: ${missing.length} acknowledged events missing from the export (${missing.slice(0, 3)})`);
  const reference = referenceRoot(leaves).toString('hex');
  if (document.treeSize !== leaves.length || document.rootHash !== reference) {
    problems.push(
      `${objectId}: export says ${document.treeSize}/${document.rootHash}, its events give ${leaves.length}/${reference}`,
    );
  }
  const root = await settled(url, key, `/compliance/${objectId}/merkle/root`);
  if (root.body.treeSize !== leaves.length || root.body.rootHash !== reference) {
    problems.push(
      `${objectId}: merkle/root ${root.status} ${root.body.treeSize}/${root.body.rootHash}, events ${leaves.length}/${reference}`,
    );
  }
  const note = String(root.body.checkpoint?.note ?? '').split('\n');
  if (note[1] !== String(leaves.length) || note[2] !== Buffer.from(reference, 'hex').toString('base64')) {
    problems.push(`${objectId}: the signed checkpoint names ${note[1]}/${note[2]}`);
  }
  const verified = await settled(url, key, `/compliance/${objectId}/verify`);
  if (verified.body.isValid !== true || verified.body.eventCount !== leaves.length) {
    problems.push(`${objectId}: verify ${JSON.stringify(verified.body).slice(0, 300)} with ${leaves.length} events`);
  }
  for (const index of [0, 1, Math.floor(leaves.length / 2), leaves.length - 1]) {
    if (index < 0 || index >= leaves.length) continue;
    const proof = await settled(url, key, `/compliance/${objectId}/merkle/proof?eventId=${ids[index]}`);
    const expected = referenceInclusionProof(index, leaves).map((h) => h.toString('hex'));
    if (
      proof.status !== 200 ||
      proof.body.leafIndex !== index ||
      JSON.stringify(proof.body.auditPath) !== JSON.stringify(expected)
    ) {
      if (proof.body.treeSize === leaves.length || proof.status !== 200) {
        problems.push(`${objectId}: proof of leaf ${index}: ${proof.status} ${JSON.stringify(proof.body).slice(0, 200)}`);
      }
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Checks of the stored log against the event store itself (the distributed form's PostgreSQL).

interface LogSnapshot {
  assets: Json[];
  nodes: Json[];
  leaves: Json[];
}

async function snapshotLog(db: SqlDatabase): Promise<LogSnapshot> {
  return {
    assets: await db.query<Json>(
      `SELECT asset_id, account_id, environment, alias, first_event_id::text AS first_event_id, tree_size::text AS tree_size,
              encode(root_hash, 'hex') AS root FROM provenance_assets ORDER BY asset_id`,
    ),
    nodes: await db.query<Json>(
      `SELECT asset_id, level, idx::text AS idx, encode(hash, 'hex') AS hash FROM merkle_nodes ORDER BY asset_id, level, idx`,
    ),
    leaves: await db.query<Json>(
      'SELECT event_id, asset_id, leaf_index::text AS leaf_index FROM provenance_events ORDER BY event_id',
    ),
  };
}

/** Rows of `a` not in `b` and of `b` not in `a` (as JSON lines), a few of each. */
function rowDifferences(what: string, a: Json[], b: Json[]): string[] {
  const left = new Set(a.map((row) => JSON.stringify(row)));
  const right = new Set(b.map((row) => JSON.stringify(row)));
  const onlyLeft = [...left].filter((row) => !right.has(row));
  const onlyRight = [...right].filter((row) => !left.has(row));
  if (onlyLeft.length === 0 && onlyRight.length === 0) return [];
  return [
    `${what}: ${onlyLeft.length} rows only before (${onlyLeft.slice(0, 2)}), ${onlyRight.length} only after (${onlyRight.slice(0, 2)})`,
  ];
}

function snapshotDifferences(before: LogSnapshot, after: LogSnapshot): string[] {
  return [
    ...rowDifferences('provenance_assets', before.assets, after.assets),
    ...rowDifferences('merkle_nodes', before.nodes, after.nodes),
    ...rowDifferences('provenance_events', before.leaves, after.leaves),
  ];
}

/**
 * The whole log against the event store: every asset stream has its tree (its size the stream's
 * version, its root the reference root of its events' hashes in version order, leaf 0 its first
 * event, every later event at its leaf index exactly once, every leaf node the event's leaf hash),
 * and the log holds nothing the store does not. `except`: assets left out (tampered on purpose).
 */
async function referenceCheck(db: SqlDatabase, except: ReadonlySet<string> = new Set()): Promise<string[]> {
  const events = await db.query<{ stream_id: string; v: string; event_id: string; hash: string }>(
    `SELECT stream_id, stream_version::text AS v, event_id::text AS event_id, metadata->'provenance'->>'hash' AS hash
     FROM event_log WHERE stream_id LIKE 'asset-%' ORDER BY stream_id, stream_version`,
  );
  const streams = new Map<string, { eventId: string; hash: string; version: number }[]>();
  for (const row of events) {
    const assetId = row.stream_id.slice('asset-'.length);
    if (except.has(assetId)) continue;
    const list = streams.get(assetId) ?? [];
    list.push({ eventId: row.event_id, hash: row.hash, version: Number(row.v) });
    streams.set(assetId, list);
  }
  const log = await snapshotLog(db);
  const problems: string[] = [];
  const assets = new Map(log.assets.filter((row) => !except.has(row.asset_id)).map((row) => [row.asset_id as string, row]));
  const leafRows = new Map<string, Map<number, string[]>>();
  for (const row of log.leaves) {
    if (except.has(row.asset_id)) continue;
    const byIndex = leafRows.get(row.asset_id) ?? new Map<number, string[]>();
    byIndex.set(Number(row.leaf_index), [...(byIndex.get(Number(row.leaf_index)) ?? []), row.event_id]);
    leafRows.set(row.asset_id, byIndex);
  }
  const leafNodes = new Map<string, Map<number, string>>();
  for (const row of log.nodes) {
    if (row.level !== 0 || except.has(row.asset_id)) continue;
    const byIndex = leafNodes.get(row.asset_id) ?? new Map<number, string>();
    byIndex.set(Number(row.idx), row.hash);
    leafNodes.set(row.asset_id, byIndex);
  }
  for (const [assetId, list] of streams) {
    const asset = assets.get(assetId);
    if (!asset) {
      problems.push(`${assetId}: ${list.length} events, no tree`);
      continue;
    }
    const leaves = list.map((event) => leafHash(leafInputOf(event.hash)));
    const root = referenceRoot(leaves).toString('hex');
    if (Number(asset.tree_size) !== list.length || asset.root !== root) {
      problems.push(`${assetId}: tree ${asset.tree_size}/${asset.root.slice(0, 12)}, events ${list.length}/${root.slice(0, 12)}`);
    }
    if (asset.first_event_id !== list[0]?.eventId)
      problems.push(`${assetId}: first event ${asset.first_event_id}, store ${list[0]?.eventId}`);
    const byIndex = leafRows.get(assetId) ?? new Map();
    list.forEach((event, index) => {
      if (index === 0) return;
      const at = byIndex.get(index);
      if (at?.length !== 1 || at[0] !== event.eventId)
        problems.push(`${assetId}: leaf ${index} holds ${JSON.stringify(at)}, store ${event.eventId}`);
    });
    for (const index of byIndex.keys())
      if (index < 1 || index >= list.length) problems.push(`${assetId}: a leaf row at ${index} of ${list.length}`);
    if (list.length > 1) {
      const nodes = leafNodes.get(assetId) ?? new Map();
      leaves.forEach((leaf, index) => {
        if (nodes.get(index) !== leaf.toString('hex'))
          problems.push(`${assetId}: leaf node ${index} ${nodes.get(index)?.slice(0, 12)}`);
      });
    }
    assets.delete(assetId);
  }
  for (const assetId of assets.keys()) problems.push(`${assetId}: a tree with no events`);
  return problems;
}

/** Waits (bounded) until the log holds as many assets and leaves as the store: the projection caught up. */
async function caughtUp(db: SqlDatabase, except: ReadonlySet<string> = new Set(), timeoutMs = 30_000): Promise<void> {
  const exceptIds = [...except];
  await waitFor(
    'the Merkle projection to catch up',
    async () => {
      const [store] = await db.query<{ assets: string; events: string }>(
        `SELECT count(DISTINCT stream_id)::text AS assets, count(*)::text AS events FROM event_log
         WHERE stream_id LIKE 'asset-%' AND NOT (substr(stream_id, 7) = ANY($1::text[]))`,
        [exceptIds],
      );
      const [log] = await db.query<{ assets: string; events: string }>(
        `SELECT count(*)::text AS assets, coalesce(sum(tree_size), 0)::text AS events FROM provenance_assets
         WHERE NOT (asset_id = ANY($1::text[]))`,
        [exceptIds],
      );
      return store?.assets === log?.assets && store?.events === log?.events ? true : undefined;
    },
    { timeoutMs, intervalMs: 250 },
  ).catch(() => {
    // Left to referenceCheck, which names what is missing.
  });
}

// =============================================================================================
// The distributed form.

describe('distributed: compliance-service killed in its commit loop, and the rebuild against a live product', () => {
  let product: DistributedProduct;
  let db: SqlDatabase;
  let key: string;
  let accountId: string;
  const tampered = new Set<string>();
  let restoreTampered: (() => Promise<unknown>) | undefined;

  const rebuild = async () => {
    const eventStore = await createSqlEventStore(db);
    return (await rebuildMerkleProjection(db, eventStore)) as { outcome?: string; events: number; differences?: LogDifference[] };
  };
  const registerObjects = async (n: number, tag: string) => {
    const objects: string[] = [];
    for (let i = 0; i < n; i++) {
      const registered = await api(product.url, key, 'POST', '/auction/objects/register', {
        title: `${tag} lot ${i}`,
        category: 'painting',
      });
      expect(registered.status, JSON.stringify(registered.body)).toBe(201);
      objects.push(registered.body.object.id as string);
    }
    return objects;
  };
  const complianceUp = () =>
    waitFor(
      'compliance-service to answer',
      async () =>
        (await fetch(`${product.url}/api/v1/system/ping/compliance-service`, { method: 'POST' })).status === 200
          ? true
          : undefined,
      { timeoutMs: 30_000, intervalMs: 100 },
    );

  beforeAll(async () => {
    product = await startDistributedProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '100000' });
    db = createPostgresDatabase({ connectionString: product.databaseUrl, maxConnections: 4, applicationName: 'review-probe' });
    const created = await api(product.url, product.operatorKey, 'POST', '/accounts', { name: 'Kill review', tier: 'enterprise' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    key = created.body.apiKey.secret as string;
    accountId = created.body.account.id as string;
    const granted = await api(product.url, product.operatorKey, 'POST', `/accounts/${accountId}/gtins`, { gtin });
    expect(granted.status, JSON.stringify(granted.body)).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    await product?.stop();
  }, 60_000);

  it('after repeated SIGKILLs of compliance-service inside its projection transactions, holds exactly the log a fresh rebuild gives, with every acknowledged write', async () => {
    const objects = await registerObjects(4, 'kill');
    const acks = newAcks(objects);
    const load = startLoad(() => product.url, key, objects, acks, 'K');
    // Kill when compliance-service is inside a projection transaction (a statement on the Merkle
    // tables running, or the transaction open between statements), plus a random few ms.
    const kills: string[] = [];
    for (let round = 0; round < 5; round++) {
      const seen = await waitFor(
        'a projection transaction',
        async () => {
          const rows = await db.query<{ state: string; query: string }>(
            `SELECT state, left(query, 40) AS query FROM pg_stat_activity
             WHERE datname = current_database() AND application_name = 'compliance-service'
               AND state IN ('active', 'idle in transaction')
               AND (query LIKE '%merkle_nodes%' OR query LIKE '%provenance_events%' OR query LIKE '%INTO provenance_assets%'
                    OR query LIKE '%UPDATE provenance_assets%' OR query LIKE '%FOR UPDATE%' OR query LIKE '%projection_checkpoints%')`,
          );
          return rows[0] ? `${rows[0].state}: ${rows[0].query}` : undefined;
        },
        { timeoutMs: 5_000, intervalMs: 2 },
      ).catch(() => 'none seen in 5 s');
      await sleep(Math.floor(Math.random() * 8));
      await product.kill('compliance-service-1');
      kills.push(seen);
      await sleep(150 + Math.floor(Math.random() * 400));
      await product.restart('compliance-service-1');
      await complianceUp();
      await sleep(300 + Math.floor(Math.random() * 500));
    }
    await load.stop();
    await complianceUp();
    const summary = `kills: ${kills.join(' | ')}; answers ${JSON.stringify([...acks.statuses])}`;
    console.log(`projection kills: ${summary}`);
    expect(acks.codes.length, summary).toBeGreaterThan(100);

    // Every acknowledged code is in the store, once.
    const storedCodes = await db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM event_log WHERE event_type = 'code.generated' AND stream_id = ANY($1::text[])`,
      [acks.codes.map((id) => `asset-${id}`)],
    );
    expect(Number(storedCodes[0]?.n), summary).toBe(acks.codes.length);

    await caughtUp(db);
    const problems: string[] = [];
    for (const objectId of objects)
      problems.push(...(await checkObject(product.url, key, objectId, acks.events.get(objectId) ?? [])));
    for (const assetId of acks.codes.filter((_, i) => i % 97 === 0)) {
      const root = await settled(product.url, key, `/compliance/${assetId}/merkle/root`);
      const verified = await settled(product.url, key, `/compliance/${assetId}/verify`);
      if (
        root.body.treeSize !== 1 ||
        root.body.rootHash !== leafHash(leafInputOf(verified.body.headHash ?? '')).toString('hex')
      ) {
        problems.push(
          `${assetId}: root ${JSON.stringify(root.body).slice(0, 160)} verify ${JSON.stringify(verified.body).slice(0, 160)}`,
        );
      }
    }
    problems.push(...(await referenceCheck(db)));
    expect(problems, summary).toEqual([]);

    // What a fresh rebuild gives (compliance-service stopped, so nothing races it): the very same rows.
    const before = await snapshotLog(db);
    await product.kill('compliance-service-1');
    try {
      const rebuilt = await rebuild();
      expect(rebuilt.differences ?? [], JSON.stringify(rebuilt).slice(0, 500)).toEqual([]);
      expect(rebuilt.outcome ?? 'rebuilt').toBe('rebuilt');
      expect(snapshotDifferences(before, await snapshotLog(db))).toEqual([]);
    } finally {
      await product.restart('compliance-service-1');
      await complianceUp();
    }
  }, 120_000);

  it('a rebuild run against the live database while writes arrive: replaced or left as it moved on, no false differences, no false LOG_MISMATCH, no older answer, nothing lost or doubled', async () => {
    const objects = await registerObjects(3, 'live-rebuild');
    const acks = newAcks(objects);
    const load = startLoad(() => product.url, key, objects, acks, 'R');
    // Readers meanwhile: every answer recorded with what had been acknowledged when it was asked.
    const reads: { objectId: string; ackedBefore: number; status: number; body: Json; what: string }[] = [];
    let reading = true;
    const readers = objects.map(async (objectId) => {
      while (reading) {
        for (const what of ['merkle/root', 'verify']) {
          const ackedBefore = acks.events.get(objectId)?.length ?? 0;
          const answer = await api(product.url, key, 'GET', `/compliance/${objectId}/${what}`).catch(() => undefined);
          if (answer) reads.push({ objectId, ackedBefore, status: answer.status, body: answer.body, what });
        }
      }
    });
    await sleep(1_500);
    const outcomes: string[] = [];
    const falseDifferences: string[] = [];
    for (let i = 0; i < 3; i++) {
      try {
        const rebuilt = await rebuild();
        outcomes.push(
          `${rebuilt.outcome ?? 'rebuilt'} after ${rebuilt.events} events, ${rebuilt.differences?.length ?? 0} differences`,
        );
        // Nothing was tampered with: every difference named is a false accusation.
        for (const d of rebuilt.differences ?? [])
          falseDifferences.push(`${d.assetId} ${d.reason} log ${d.loggedSize} events ${d.rebuiltSize}`);
      } catch (error) {
        outcomes.push(`threw ${String(error).slice(0, 200)}`);
      }
      await sleep(700);
    }
    await load.stop();
    reading = false;
    await Promise.all(readers);
    const summary = `rebuilds: ${outcomes.join(' | ')}; answers ${JSON.stringify([...acks.statuses])}; reads ${reads.length}`;
    console.log(`live rebuild: ${summary}`);

    await caughtUp(db, tampered);
    const problems: string[] = [];
    const leavesByObject = new Map<string, Buffer[]>();
    for (const objectId of objects) {
      problems.push(...(await checkObject(product.url, key, objectId, acks.events.get(objectId) ?? [])));
      const exported = await settled(product.url, key, `/compliance/${objectId}/export?format=json`);
      leavesByObject.set(objectId, leavesOf(exported.body, problems));
    }
    // Every answer given during the rebuilds: a chain check never invalid (nothing was tampered with),
    // a root never older than the writes acknowledged before it was asked, and always the root of the
    // events' own first treeSize leaves.
    for (const read of reads) {
      if (read.status === 503) continue;
      const leaves = leavesByObject.get(read.objectId) ?? [];
      if (read.status !== 200)
        problems.push(`${read.what} of ${read.objectId}: ${read.status} ${JSON.stringify(read.body).slice(0, 200)}`);
      else if (read.what === 'verify' && read.body.isValid !== true)
        problems.push(`verify of ${read.objectId}: ${JSON.stringify(read.body).slice(0, 300)}`);
      else if (read.what === 'merkle/root') {
        if (read.body.treeSize < read.ackedBefore + 1)
          problems.push(`root of ${read.objectId}: size ${read.body.treeSize} after ${read.ackedBefore} acknowledged events`);
        if (read.body.rootHash !== referenceRoot(leaves.slice(0, read.body.treeSize)).toString('hex')) {
          problems.push(`root of ${read.objectId} at size ${read.body.treeSize} is not the root of its events`);
        }
      }
    }
    problems.push(...(await referenceCheck(db, tampered)));
    expect({ problems: problems.slice(0, 20), falseDifferences: falseDifferences.slice(0, 10) }, summary).toEqual({
      problems: [],
      falseDifferences: [],
    });
    // Each run replaced the log, or found it moved on by the running service and left it.
    expect(
      outcomes.filter((outcome) => !outcome.startsWith('rebuilt') && !outcome.startsWith('moved')),
      summary,
    ).toEqual([]);
  }, 120_000);

  it('a write the live projection records between the rebuild’s last read and its comparison is no difference: the log moved, and is left', async () => {
    // The interleaving a slow or busy database gives: the rebuild has read to the end of the log, and
    // before it compares, a code is generated and projected by the running compliance-service.
    const eventStore = await createSqlEventStore(db);
    let fresh: string | undefined;
    const slowStore = {
      ...eventStore,
      async readAll(options: Parameters<typeof eventStore.readAll>[0]) {
        const page = await eventStore.readAll(options);
        if (page.events.length === 0 && fresh === undefined) {
          const code = await api(product.url, key, 'POST', '/code/generate', {
            gtin,
            serialNumber: `LATE-${randomUUID().slice(0, 8)}`,
          });
          expect(code.status).toBe(201);
          fresh = code.body.assetId as string;
          expect((await settled(product.url, key, `/compliance/${fresh}/merkle/root`)).status).toBe(200);
        }
        return page;
      },
    };
    const rebuilt = await rebuildMerkleProjection(db, slowStore);
    expect(
      ('differences' in rebuilt ? rebuilt.differences : []).map(
        (d) => `${d.assetId} ${d.reason} log ${d.loggedSize} events ${d.rebuiltSize}`,
      ),
      `a genuine code written during the rebuild (${fresh}) named as evidence of tampering; outcome ${rebuilt.outcome}`,
    ).toEqual([]);
    // The log moved on past the replay: it is left as the running service keeps it.
    expect(rebuilt.outcome).toBe('moved');
    // And the code's tree is there afterwards.
    expect((await settled(product.url, key, `/compliance/${fresh}/merkle/root`)).body.treeSize).toBe(1);
  }, 60_000);

  it('a rebuild while the service runs keeps a genuine LOG_MISMATCH (a consistently rewritten event) and the root signed before', async () => {
    const [objectId] = await registerObjects(1, 'tamper');
    if (!objectId) throw new Error('no object');
    for (let i = 0; i < 3; i++) {
      const recorded = await api(product.url, key, 'POST', '/auction/provenance/events', {
        objectId,
        eventType: 'cataloged',
        actorRole: 'auction_house',
        description: `genuine ${i}`,
      });
      expect(recorded.status, JSON.stringify(recorded.body)).toBe(201);
    }
    const before = await settled(product.url, key, `/compliance/${objectId}/merkle/root`);
    expect(before.body.treeSize).toBe(4);
    expect((await settled(product.url, key, `/compliance/${objectId}/verify`)).body).toMatchObject({
      isValid: true,
      eventCount: 4,
    });

    // Rewrite the last event's data and rehash it: the chain stays consistent, only the log remembers.
    const [row] = await db.query<{ event_type: string; data: Json; metadata: Json }>(
      'SELECT event_type, data, metadata FROM event_log WHERE stream_id = $1 AND stream_version = 4',
      [`asset-${objectId}`],
    );
    if (!row) throw new Error('no event 4');
    const p = row.metadata.provenance as Json;
    const data = { ...row.data, description: 'rewritten after the fact' };
    const hash = hashProvenanceRecord({
      assetId: p.assetId,
      accountId: p.accountId,
      environment: p.environment,
      sequence: p.sequence,
      type: row.event_type,
      occurredAt: p.occurredAt,
      data,
      prevHash: p.prevHash,
    });
    await db.query(
      `UPDATE events SET data = $2::jsonb, metadata = jsonb_set(metadata, '{provenance,hash}', to_jsonb($3::text))
       WHERE stream_id = $1 AND stream_version = 4`,
      [`asset-${objectId}`, JSON.stringify(data), hash],
    );
    tampered.add(objectId);
    // Put the event back afterwards, so the later tests start from an untampered store.
    restoreTampered = () =>
      db.query(
        `UPDATE events SET data = $2::jsonb, metadata = jsonb_set(metadata, '{provenance,hash}', to_jsonb($3::text))
         WHERE stream_id = $1 AND stream_version = 4`,
        [`asset-${objectId}`, JSON.stringify(row.data), p.hash],
      );
    const caught = await settled(product.url, key, `/compliance/${objectId}/verify`);
    expect(caught.body, 'the log catches the rewrite').toMatchObject({
      isValid: false,
      brokenAt: { sequence: 4, reason: 'LOG_MISMATCH' },
    });

    // An operator rebuilds while the service runs (and an unrelated write arrives).
    const unrelated = api(product.url, key, 'POST', '/code/generate', { gtin, serialNumber: `T-${randomUUID().slice(0, 8)}` });
    const rebuilt = await rebuild();
    await unrelated;
    const after = await settled(product.url, key, `/compliance/${objectId}/verify`);
    const rootAfter = await settled(product.url, key, `/compliance/${objectId}/merkle/root`);
    expect(
      {
        verify: after.body.brokenAt?.reason,
        valid: after.body.isValid,
        root: rootAfter.body.rootHash,
        size: rootAfter.body.treeSize,
      },
      JSON.stringify(rebuilt).slice(0, 400),
    ).toEqual({ verify: 'LOG_MISMATCH', valid: false, root: before.body.rootHash, size: 4 });
    if (rebuilt.differences) expect(rebuilt.differences.map((d) => d.assetId)).toContain(objectId);
  }, 60_000);

  it('two rebuilds that overlap (an operator runs it again, a second job) never swap in a half-built log', async () => {
    await restoreTampered?.();
    restoreTampered = undefined;
    // A rebuild first, so the log is whole whatever the tests before left (and the tampered event is back).
    const eventStore = await createSqlEventStore(db);
    await rebuildMerkleProjection(db, eventStore, { acceptDifferences: true });
    await caughtUp(db, new Set(), 10_000);
    const whole = await referenceCheck(db);
    expect(whole, 'the log is whole before the overlap').toEqual([]);

    // The second run starts while the first is about to swap its rebuilt log in (its last transaction
    // open, the log compared already): it replays its first page, and is slower from there on.
    let firstPageDone!: () => void;
    const secondReplayedAPage = new Promise<void>((resolve) => {
      firstPageDone = resolve;
    });
    let releaseSecond!: () => void;
    const secondMayGoOn = new Promise<void>((resolve) => {
      releaseSecond = resolve;
    });
    let secondReads = 0;
    const secondStore = {
      ...eventStore,
      async readAll(options: Parameters<typeof eventStore.readAll>[0]) {
        secondReads += 1;
        if (secondReads === 2) {
          firstPageDone();
          await secondMayGoOn;
        }
        return eventStore.readAll(options);
      },
    };
    let second: Promise<string> | undefined;
    let swapping = false;
    const firstDb: SqlDatabase = {
      ...db,
      transaction: (work) =>
        db.transaction((tx) =>
          work({
            ...tx,
            async query(text, params) {
              if (!swapping && /^\s*TRUNCATE/.test(text)) {
                swapping = true;
                second = rebuildMerkleProjection(db, secondStore).then(
                  (outcome) => `second: ${outcome.outcome}, ${outcome.events} events`,
                  (error: unknown) => `second threw: ${String(error).slice(0, 160)}`,
                );
                await Promise.race([secondReplayedAPage, sleep(10_000)]);
              }
              return tx.query(text, params);
            },
          }),
        ),
    };
    const first = await rebuildMerkleProjection(firstDb, eventStore).then(
      (outcome) =>
        `first: ${outcome.outcome}, ${outcome.events} events, ${'differences' in outcome ? outcome.differences.length : 0} differences`,
      (error: unknown) => `first threw: ${String(error).slice(0, 160)}`,
    );
    releaseSecond();
    const outcomes = `${first}; ${await second}`;
    console.log(`overlapping rebuilds: ${outcomes}`);
    await caughtUp(db, new Set(), 5_000);
    const problems = await referenceCheck(db);
    expect(problems.length, `${outcomes}; e.g. ${problems.slice(0, 3).join(' | ')}`).toBe(0);
  }, 60_000);
});

// =============================================================================================
// The embedded form: `hallmark start` (PGlite) killed under load, restarted on the same folder.

describe('embedded: hallmark start killed (SIGKILL) under load and started again on its data folder', () => {
  afterEach(cleanUp);

  it('keeps every acknowledged event and code in the log, in order, once; the CLI rebuild afterwards gives the same roots', async () => {
    const dataDir = await newDataDir();
    const env = { HALLMARK_PUBLIC_RATE_LIMIT: '100000' };
    let server = await startServer(dataDir, env);
    const { key: brandKey } = await tenant(server.url, dataDir);
    const objects: string[] = [];
    for (let i = 0; i < 3; i++) {
      const registered = await api(server.url, brandKey, 'POST', '/auction/objects/register', {
        title: `Embedded lot ${i}`,
        category: 'watch',
      });
      expect(registered.status, JSON.stringify(registered.body)).toBe(201);
      objects.push(registered.body.object.id as string);
    }
    const acks = newAcks(objects);
    const rounds: string[] = [];
    for (let round = 0; round < 2; round++) {
      const current = server;
      const load = startLoad(() => current.url, brandKey, objects, acks, `E${round}`);
      await sleep(1_000 + Math.floor(Math.random() * 1_000));
      await kill(current);
      await load.stop();
      rounds.push(`round ${round}: codes ${acks.codes.length}, events ${[...acks.events.values()].map((list) => list.length)}`);
      server = await startServer(dataDir, env);
    }
    const summary = `${rounds.join('; ')}; answers ${JSON.stringify([...acks.statuses])}`;
    console.log(`embedded kills: ${summary}`);

    const problems: string[] = [];
    for (const objectId of objects)
      problems.push(...(await checkObject(server.url, brandKey, objectId, acks.events.get(objectId) ?? [])));
    // Every acknowledged code: listed (once), its tree one leaf whose root is its event's leaf hash.
    const listed = new Map<string, number>();
    for (let cursor: string | undefined, first = true; first || cursor; first = false) {
      const page = await api(
        server.url,
        brandKey,
        'GET',
        `/codes?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      for (const code of page.body.data as Json[]) listed.set(code.assetId, (listed.get(code.assetId) ?? 0) + 1);
      cursor = page.body.nextCursor ?? undefined;
    }
    const lost = acks.codes.filter((id) => !listed.has(id));
    if (lost.length > 0) problems.push(`${lost.length} acknowledged codes not listed after the restarts`);
    const roots = new Map<string, string>();
    const sample = [...acks.codes.filter((_, i) => i % 53 === 0), ...objects];
    for (const assetId of sample) {
      const root = await settled(server.url, brandKey, `/compliance/${assetId}/merkle/root`);
      if (root.status !== 200) problems.push(`${assetId}: root ${root.status}`);
      roots.set(assetId, `${root.body.treeSize}:${root.body.rootHash}`);
      if (!objects.includes(assetId)) {
        const verified = await settled(server.url, brandKey, `/compliance/${assetId}/verify`);
        if (
          verified.body.isValid !== true ||
          root.body.treeSize !== 1 ||
          root.body.rootHash !== leafHash(leafInputOf(verified.body.headHash ?? '')).toString('hex')
        ) {
          problems.push(`${assetId}: ${JSON.stringify(root.body).slice(0, 120)} ${JSON.stringify(verified.body).slice(0, 160)}`);
        }
      }
    }
    expect(problems, summary).toEqual([]);

    // `hallmark projections rebuild` on the folder (the server stopped): same roots, nothing differs.
    await kill(server);
    const rebuilt = await runHallmark(dataDir, {}, ['projections', 'rebuild']);
    expect(rebuilt.code, `${rebuilt.stdout}\n${rebuilt.stderr}`).toBe(0);
    expect(rebuilt.stdout).toMatch(/Rebuilt the Merkle projection/);
    expect(rebuilt.stdout).not.toMatch(/differed/);
    server = await startServer(dataDir, env);
    const changed: string[] = [];
    for (const assetId of sample) {
      const root = await settled(server.url, brandKey, `/compliance/${assetId}/merkle/root`);
      if (`${root.body.treeSize}:${root.body.rootHash}` !== roots.get(assetId))
        changed.push(`${assetId}: ${roots.get(assetId)} -> ${root.body.treeSize}:${root.body.rootHash}`);
    }
    expect(changed).toEqual([]);
    await kill(server);
  }, 180_000);
});
