// Ceilings the benchmarks of issue #19 measure in their own run, so that their ratios hold on a
// noisy machine: raw Ed25519 verification on every core, and one-row inserts from 50 clients.
import { generateKeyPairSync, sign } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

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
