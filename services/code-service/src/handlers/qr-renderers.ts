import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { HallmarkError } from '@hallmark/contracts';

/** What one PNG render asks of qrcode. */
export interface QrPngJob {
  text: string;
  options: { errorCorrectionLevel: 'M'; margin: number; type: 'png'; width: number };
}

export interface QrRenderers {
  /**
   * Draws a PNG on a worker thread for `owner` (an account; none: a share of its own). Fails with
   * SERVICE_UNAVAILABLE (details.retryAfterSeconds) when the threads are busy and the queue, or the
   * owner's half of it, is full, and with INTERNAL_ERROR when a thread fails.
   */
  renderPng(job: QrPngJob, owner?: string): Promise<Buffer>;
  /** Ends the threads; queued and running renders fail. */
  close(): Promise<void>;
}

export interface QrRendererLimits {
  /** Threads drawing at once; made when first needed. */
  threads: number;
  /** Pixels (width²) of the renders that may wait for a thread; beyond, a render is refused. */
  maxWaitingPixels: number;
  /** Renders that may wait, whatever their size. */
  maxWaiting: number;
}

/**
 * Two threads (one on a single-core machine), and up to two 4,096-pixel renders' worth of work
 * waiting (many more small ones): on a loaded two-core machine the last one waiting is drawn well
 * within the gateway's 5-second service timeout. One owner may hold at most half of what waits (in
 * renders and in pixels), and a freed thread goes first to a render whose owner has none running:
 * an account drawing 4,096-pixel images in a loop filled both threads and the queue, and every
 * other account's QR image was a 503.
 */
export const defaultQrRendererLimits: QrRendererLimits = {
  threads: Math.min(2, availableParallelism()),
  maxWaitingPixels: 2 * 4096 * 4096,
  maxWaiting: 64,
};

interface Pending {
  id: number;
  owner: string;
  job: QrPngJob;
  resolve(png: Buffer): void;
  reject(error: Error): void;
}

interface Thread {
  worker: Worker;
  running: Pending | undefined;
}

const workerUrl = new URL('./qr-render-worker.js', import.meta.url);

/**
 * QR PNGs drawn off the event loop, so a large render never stalls the process's other requests
 * (or its health checks). The threads are made lazily and kept; a thread that dies is replaced by
 * the next render.
 */
export function createQrRenderers(limits: QrRendererLimits = defaultQrRendererLimits): QrRenderers {
  const threads: Thread[] = [];
  const waiting: Pending[] = [];
  let waitingPixels = 0;
  let nextId = 1;
  let closed = false;
  /** What each owner has running and waiting, and when it last started one, kept only while it has any. */
  const byOwner = new Map<string, { running: number; waiting: number; waitingPixels: number; started: number }>();
  let starts = 0;

  const pixelsOf = (job: QrPngJob) => job.options.width * job.options.width;
  const heldBy = (owner: string) => byOwner.get(owner) ?? { running: 0, waiting: 0, waitingPixels: 0, started: 0 };
  const note = (owner: string, change: { running?: number; waiting?: number; waitingPixels?: number; started?: number }) => {
    const held = heldBy(owner);
    const next = {
      running: held.running + (change.running ?? 0),
      waiting: held.waiting + (change.waiting ?? 0),
      waitingPixels: held.waitingPixels + (change.waitingPixels ?? 0),
      started: change.started ?? held.started,
    };
    if (next.running === 0 && next.waiting === 0) byOwner.delete(owner);
    else byOwner.set(owner, next);
  };
  /**
   * The next render to draw: the oldest waiting render of the owner with the fewest running, of
   * those the one that started a render longest ago (so owners take turns).
   */
  const nextWaiting = (): Pending | undefined => {
    let chosen = -1;
    for (const [index, pending] of waiting.entries()) {
      if (chosen < 0) {
        chosen = index;
        continue;
      }
      const best = heldBy((waiting[chosen] as Pending).owner);
      const held = heldBy(pending.owner);
      if (held.running < best.running || (held.running === best.running && held.started < best.started)) chosen = index;
    }
    return chosen < 0 ? undefined : waiting.splice(chosen, 1)[0];
  };

  function spawn(): Thread {
    const thread: Thread = { worker: new Worker(workerUrl), running: undefined };
    thread.worker.on('message', (message: { id: number; png?: Uint8Array; error?: string }) => {
      const pending = thread.running;
      if (!pending || pending.id !== message.id) return;
      thread.running = undefined;
      note(pending.owner, { running: -1 });
      if (message.png) pending.resolve(Buffer.from(message.png.buffer, message.png.byteOffset, message.png.byteLength));
      else pending.reject(new HallmarkError('INTERNAL_ERROR', `The QR image could not be drawn: ${message.error}`));
      dispatch();
    });
    const lost = (error: Error) => {
      const index = threads.indexOf(thread);
      if (index >= 0) threads.splice(index, 1);
      const pending = thread.running;
      thread.running = undefined;
      if (pending) note(pending.owner, { running: -1 });
      pending?.reject(new HallmarkError('INTERNAL_ERROR', 'The QR renderer stopped.', undefined, { cause: error }));
      if (!closed) dispatch();
    };
    thread.worker.on('error', lost);
    thread.worker.on('exit', (code) => lost(new Error(`QR renderer thread exited with code ${code}`)));
    threads.push(thread);
    return thread;
  }

  function dispatch(): void {
    while (waiting.length > 0) {
      const idle =
        threads.find((thread) => thread.running === undefined) ?? (threads.length < limits.threads ? spawn() : undefined);
      if (!idle) return;
      const pending = nextWaiting() as Pending;
      waitingPixels -= pixelsOf(pending.job);
      starts += 1;
      note(pending.owner, { running: 1, waiting: -1, waitingPixels: -pixelsOf(pending.job), started: starts });
      idle.running = pending;
      idle.worker.postMessage({ id: pending.id, ...pending.job });
    }
  }

  return {
    renderPng(job, owner = '') {
      if (closed) return Promise.reject(new HallmarkError('SERVICE_UNAVAILABLE', 'The QR renderer is stopping.'));
      const busy = threads.length >= limits.threads && threads.every((thread) => thread.running !== undefined);
      const pixels = pixelsOf(job);
      const held = heldBy(owner);
      const queueFull = waiting.length >= limits.maxWaiting || waitingPixels + pixels > limits.maxWaitingPixels;
      // Half the queue an owner, and never less than one render (a queue of one is still usable by one owner).
      const shareFull =
        held.waiting > 0 &&
        (held.waiting >= Math.max(1, Math.floor(limits.maxWaiting / 2)) ||
          held.waitingPixels + pixels > Math.max(pixels, Math.floor(limits.maxWaitingPixels / 2)));
      if (busy && (queueFull || shareFull)) {
        return Promise.reject(
          new HallmarkError('SERVICE_UNAVAILABLE', 'Too many QR images are being drawn; retry in a second.', {
            retryAfterSeconds: 1,
          }),
        );
      }
      return new Promise<Buffer>((resolve, reject) => {
        waiting.push({ id: nextId++, owner, job, resolve, reject });
        waitingPixels += pixels;
        note(owner, { waiting: 1, waitingPixels: pixels });
        dispatch();
      });
    },
    async close() {
      closed = true;
      for (const pending of waiting.splice(0))
        pending.reject(new HallmarkError('SERVICE_UNAVAILABLE', 'The QR renderer stopped.'));
      waitingPixels = 0;
      byOwner.clear();
      await Promise.all(threads.map((thread) => thread.worker.terminate()));
    },
  };
}
