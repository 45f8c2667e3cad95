// Ceilings the benchmarks of issue #19 measure in their own run, so that their ratios hold on a
// noisy machine: raw Ed25519 verification on every core, and one-row inserts from 50 clients.
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { createPgliteDatabase, createPostgresDatabase, type SqlDatabase } from '@hallmark/sql';

// Each worker verifies one 300-byte message with a cached KeyObject in a loop, as a verification
// does (node:crypto, OpenSSL's Ed25519), after a warm-up.
const verifyWorker = `
const { parentPort, workerData } = require('node:worker_threads');
const { createPublicKey, verify } = require('node:crypto');
const key = createPublicKey({ key: Buffer.from(workerData.publicKey), format: 'der', type: 'spki' });
const message = Buffer.from(workerData.message);
const signature = Buffer.from(workerData.signature);
for (let i = 0; i < 2000; i++) verify(null, message, key, signature);
parentPort.postMessage('ready');
parentPort.once('message', () => {
  const started = performance.now();
  let count = 0;
  while (performance.now() - started < workerData.ms) {
    if (!verify(null, message, key, signature)) throw new Error('bad signature');
    count++;
  }
  parentPort.postMessage({ count, ms: performance.now() - started });
});
`;

export interface Ed25519Ceiling {
  /** Verifications per second, all threads together. */
  perSecond: number;
  threads: number;
  /** Verifications per second of one thread alone (the first figure of `perThread` when run together). */
  perThread: number[];
}

/**
 * Raw Ed25519 verifications per second with `threads` worker threads verifying at once (default:
 * every core), in one process: the most a process using every core could verify, with nothing
 * else to do. Workers start together after warming up, and run for `ms`.
 */
export async function ed25519Ceiling(threads = availableParallelism(), ms = 3_000): Promise<Ed25519Ceiling> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const message = Buffer.alloc(300, 7);
  const workerData = {
    publicKey: publicKey.export({ format: 'der', type: 'spki' }),
    message,
    signature: sign(null, message, privateKey),
    ms,
  };
  const workers = Array.from({ length: threads }, () => new Worker(verifyWorker, { eval: true, workerData }));
  try {
    await Promise.all(workers.map((worker) => new Promise((resolve) => worker.once('message', resolve))));
    const results = await Promise.all(
      workers.map(
        (worker) =>
          new Promise<{ count: number; ms: number }>((resolve, reject) => {
            worker.once('message', resolve);
            worker.once('error', reject);
            worker.postMessage('go');
          }),
      ),
    );
    const perThread = results.map(({ count, ms: took }) => Math.round(count / (took / 1000)));
    return { perSecond: perThread.reduce((sum, rate) => sum + rate, 0), threads, perThread };
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}

export const percent = (rate: number, ceiling: number) => `${((rate / ceiling) * 100).toFixed(0)}%`;

/**
 * One-row inserts per second that `db` accepts from `clients` concurrent clients, each inserting
 * one row (a text key and 200 bytes, about a code row's size) per statement in its own implicit
 * transaction, for `ms`: what a generate needs of the database at least (one durable row), with
 * nothing else to do. The table is made for the run and dropped after it.
 */
async function insertRate(db: SqlDatabase, clients: number, ms: number): Promise<number> {
  const table = `insert_ceiling_${randomUUID().slice(0, 8)}`;
  await db.query(
    `CREATE TABLE ${table} (id text PRIMARY KEY, payload text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
  );
  const payload = 'x'.repeat(200);
  const insert = `INSERT INTO ${table} (id, payload) VALUES ($1, $2)`;
  try {
    // A short warm-up, then the measured window.
    const run = async (until: number) => {
      let count = 0;
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (performance.now() < until) {
            await db.query(insert, [randomUUID(), payload]);
            count++;
          }
        }),
      );
      return count;
    };
    await run(performance.now() + 500);
    const started = performance.now();
    const count = await run(started + ms);
    return Math.round(count / ((performance.now() - started) / 1000));
  } finally {
    await db.query(`DROP TABLE ${table}`);
  }
}

/** One-row inserts per second into this PostgreSQL database from `clients` connections (bench/ceilings.ts, insertRate). */
export async function postgresInsertCeiling(databaseUrl: string, clients = 50, ms = 4_000): Promise<number> {
  const db = createPostgresDatabase({
    connectionString: databaseUrl,
    maxConnections: clients,
    applicationName: 'insert-ceiling',
  });
  try {
    return await insertRate(db, clients, ms);
  } finally {
    await db.close();
  }
}

/**
 * One-row inserts per second into PGlite from `clients` concurrent callers: a PGlite of the
 * embedded form's kind (same version, on disk in a temporary folder) in this process, since the
 * product's own is held by its process. PGlite has one connection: the callers queue for it.
 */
export async function pgliteInsertCeiling(clients = 50, ms = 4_000): Promise<number> {
  const folder = await mkdtemp(join(tmpdir(), 'hallmark-ceiling-'));
  const db = await createPgliteDatabase(join(folder, 'pglite'));
  try {
    return await insertRate(db, clients, ms);
  } finally {
    await db.close();
    await rm(folder, { recursive: true, force: true });
  }
}
