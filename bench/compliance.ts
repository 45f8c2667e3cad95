// Compliance (issue #6) on PostgreSQL: events appended per second to one stream and across streams;
// root and proof latency for assets of 1, 1,000 and 1,000,000 events; export throughput and peak
// memory for 100,000 events. Runs the service's own code against a fresh database on the local server.
//
//   pnpm bench:compliance            (BENCH_BIG=200000 for a smaller big tree)
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createSigningKeyring, migrateAccounts, provisionAccount } from '@hallmark/accounts';
import type { ExportPage, Principal } from '@hallmark/contracts';
import { createSqlEventStore, type StoredEvent } from '@hallmark/event-store';
import { appendToAssetHistory, type ChainedRecord, chainEvents, startAssetHistory } from '@hallmark/provenance';
import { createPostgresDatabase, createTestDatabase } from '@hallmark/sql';
import { createCheckpointSigner } from '../services/compliance-service/src/checkpoint-signer.ts';
import { exportPage } from '../services/compliance-service/src/handlers/export-page.ts';
import { merkleProof, merkleRoot } from '../services/compliance-service/src/handlers/merkle.ts';
import { projectEvents } from '../services/compliance-service/src/merkle-projection.ts';
import { migrateCompliance } from '../services/compliance-service/src/store/merkle-store.ts';
import { exportStream } from '../services/gateway/src/routes/compliance-export.ts';
import { machineLine } from './support.ts';

/** A synthetic event's id: a UUID (the column's type), the same for the same asset and sequence. */
function eventIdOf(assetId: string, sequence: number): string {
  const hex = createHash('sha256').update(`${assetId}:${sequence}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const bigTree = Number(process.env.BENCH_BIG ?? 1_000_000);
const exportEvents = 100_000;
const now = () => new Date();

const test = await createTestDatabase('bench_compliance');
const db = createPostgresDatabase({ connectionString: test.url, applicationName: 'bench-compliance', maxConnections: 16 });
const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  console.log(line);
};

function percentiles(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
  return `p50 ${at(0.5).toFixed(2)} ms, p99 ${at(0.99).toFixed(2)} ms`;
}

try {
  const store = await createSqlEventStore(db);
  await migrateAccounts(db);
  await migrateCompliance(db);
  const account = await provisionAccount(
    { db, eventStore: store },
    { name: 'bench', tier: 'enterprise', environment: 'live' },
    now(),
  );
  const owner: Principal = { accountId: account.account.id, environment: 'live' };
  const keyring = createSigningKeyring(db, randomBytes(32));
  const deps = { db, signCheckpoint: createCheckpointSigner(keyring, 'hallmark', { db }) };

  // 1. Appends, each read-head-then-append with the store's version check.
  const start = (assetId: string) =>
    store.startStreams([startAssetHistory({ assetId, owner }, [{ type: 'registered', data: {} }], now().toISOString())]);
  const appendLoop = async (assetId: string, count: number) => {
    for (let i = 0; i < count; i += 1) {
      await appendToAssetHistory(store, { assetId, owner }, [{ type: 'condition_report', data: { i } }], { now });
    }
  };
  await start('bench_one');
  let t0 = performance.now();
  await appendLoop('bench_one', 2_000);
  say(`append, one stream, one writer: ${Math.round(2_000 / ((performance.now() - t0) / 1000))} events/s`);
  await start('bench_contended');
  t0 = performance.now();
  await Promise.all(Array.from({ length: 4 }, () => appendLoop('bench_contended', 500)));
  say(
    `append, one stream, 4 racing writers: ${Math.round(2_000 / ((performance.now() - t0) / 1000))} events/s (retries on version conflicts)`,
  );
  await Promise.all(Array.from({ length: 8 }, (_, i) => start(`bench_many_${i}`)));
  t0 = performance.now();
  await Promise.all(Array.from({ length: 8 }, (_, i) => appendLoop(`bench_many_${i}`, 500)));
  say(`append, 8 streams, 8 writers: ${Math.round(4_000 / ((performance.now() - t0) / 1000))} events/s`);

  // 2. Trees of 1, 1,000 and bigTree leaves, built by the projection's own code from synthetic events.
  async function buildTree(assetId: string, size: number) {
    let head: ChainedRecord | undefined;
    const batch = 10_000;
    for (let from = 0; from < size; from += batch) {
      const count = Math.min(batch, size - from);
      const inputs = Array.from({ length: count }, (_, i) => ({ type: 'exhibited', data: { n: from + i } }));
      const { records } = chainEvents({ assetId, owner }, head, inputs, now().toISOString());
      head = records.at(-1);
      const events: StoredEvent[] = records.map((record) => ({
        eventId: eventIdOf(assetId, record.sequence),
        streamId: `asset-${assetId}`,
        streamVersion: record.sequence,
        globalPosition: record.sequence,
        type: record.type,
        data: record.data,
        metadata: { provenance: { ...record, type: undefined, data: undefined } },
        recordedAt: record.occurredAt,
      }));
      await db.transaction((tx) => projectEvents(tx, events));
    }
  }
  for (const size of [1, 1_000, bigTree]) {
    const assetId = `bench_tree_${size}`;
    t0 = performance.now();
    await buildTree(assetId, size);
    const built = (performance.now() - t0) / 1000;
    // What autovacuum does after a bulk load; without statistics the planner may scan the whole tree.
    await db.query('ANALYZE merkle_nodes, provenance_events, provenance_assets');
    for (let i = 0; i < 200; i += 1) await merkleProof(deps, owner, assetId, eventIdOf(assetId, 1 + (i % size)));
    const roots: number[] = [];
    const proofs: number[] = [];
    for (let i = 0; i < 2_000; i += 1) {
      let t = performance.now();
      await merkleRoot(deps, owner, assetId);
      roots.push(performance.now() - t);
      const leaf = 1 + Math.floor(Math.random() * size);
      t = performance.now();
      await merkleProof(deps, owner, assetId, eventIdOf(assetId, leaf));
      proofs.push(performance.now() - t);
    }
    say(
      `tree of ${size.toLocaleString('en')} events (projected in ${built.toFixed(1)} s): root ${percentiles(roots)}; proof ${percentiles(proofs)}`,
    );
  }

  // 3. An export of 100,000 real events (event store + projection), streamed as the gateway does.
  const exportAsset = 'bench_export';
  await start(exportAsset);
  let version = 1;
  let head: ChainedRecord | undefined = (await store.readStream(`asset-${exportAsset}`)).map((event) => ({
    ...(event.metadata.provenance as Omit<ChainedRecord, 'type' | 'data'>),
    type: event.type,
    data: event.data,
  }))[0];
  while (version < exportEvents) {
    const count = Math.min(1_000, exportEvents - version);
    const inputs = Array.from({ length: count }, (_, i) => ({
      type: 'condition_report',
      data: { inspector: 'A. Person', grade: 'excellent', notes: 'bench event', n: version + i, id: randomUUID() },
    }));
    const { events, records } = chainEvents({ assetId: exportAsset, owner }, head, inputs, now().toISOString());
    await store.append(`asset-${exportAsset}`, events, { expectedVersion: version });
    head = records.at(-1);
    version += count;
  }
  for (let after = 0; after < exportEvents; after += 5_000) {
    const events = await store.readStream(`asset-${exportAsset}`, { afterVersion: after, limit: 5_000 });
    await db.transaction((tx) => projectEvents(tx, events));
  }
  await db.query('ANALYZE merkle_nodes, provenance_events, provenance_assets, events');
  // Live heap: sampled right after a full collection, so it counts what the export holds on to.
  const gc = global.gc as () => void;
  gc();
  const baseline = process.memoryUsage();
  let peakRss = baseline.rss;
  let peakHeap = baseline.heapUsed;
  const sampler = setInterval(() => {
    gc();
    const usage = process.memoryUsage();
    peakRss = Math.max(peakRss, usage.rss);
    peakHeap = Math.max(peakHeap, usage.heapUsed);
  }, 250);
  t0 = performance.now();
  const exportDeps = { ...deps, eventStore: store };
  const first = await exportPage(exportDeps, owner, { assetId: exportAsset, fromLeafIndex: 0 });
  const next = (fromLeafIndex: number): Promise<ExportPage> =>
    exportPage(exportDeps, owner, { assetId: exportAsset, treeSize: first.treeSize, fromLeafIndex });
  let bytes = 0;
  await pipeline(
    exportStream(first, next, 'json', now().toISOString()),
    new Writable({
      write(chunk, _encoding, done) {
        bytes += chunk.length;
        done();
      },
    }),
  );
  clearInterval(sampler);
  const seconds = (performance.now() - t0) / 1000;
  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;
  say(
    `export of ${exportEvents.toLocaleString('en')} events (JSON, with proofs): ${seconds.toFixed(1)} s, ` +
      `${Math.round(exportEvents / seconds).toLocaleString('en')} events/s, ${mb(bytes)} written; ` +
      `live heap ${mb(baseline.heapUsed)} before, peak ${mb(peakHeap)}; RSS ${mb(baseline.rss)} before, peak ${mb(peakRss)}`,
  );
  say(machineLine());
} finally {
  await db.close();
  await test.drop();
}
