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
   * Draws a PNG on a worker thread. Fails with SERVICE_UNAVAILABLE (details.retryAfterSeconds)
   * when the threads are busy and the queue is full, and with INTERNAL_ERROR when a thread fails.
   */
  renderPng(job: QrPngJob): Promise<Buffer>;
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
 * within the gateway's 5-second service timeout.
 */
export const defaultQrRendererLimits: QrRendererLimits = {
  threads: Math.min(2, availableParallelism()),
  maxWaitingPixels: 2 * 4096 * 4096,
  maxWaiting: 64,
};

interface Pending {
  id: number;
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

  const pixelsOf = (job: QrPngJob) => job.options.width * job.options.width;

  function spawn(): Thread {
    const thread: Thread = { worker: new Worker(workerUrl), running: undefined };
    thread.worker.on('message', (message: { id: number; png?: Uint8Array; error?: string }) => {
      const pending = thread.running;
      if (!pending || pending.id !== message.id) return;
      thread.running = undefined;
      if (message.png) pending.resolve(Buffer.from(message.png.buffer, message.png.byteOffset, message.png.byteLength));
      else pending.reject(new HallmarkError('INTERNAL_ERROR', `The QR image could not be drawn: ${message.error}`));
      dispatch();
    });
    const lost = (error: Error) => {
      const index = threads.indexOf(thread);
      if (index >= 0) threads.splice(index, 1);
      const pending = thread.running;
      thread.running = undefined;
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
      const pending = waiting.shift() as Pending;
      waitingPixels -= pixelsOf(pending.job);
      idle.running = pending;
      idle.worker.postMessage({ id: pending.id, ...pending.job });
    }
  }

  return {
    renderPng(job) {
      if (closed) return Promise.reject(new HallmarkError('SERVICE_UNAVAILABLE', 'The QR renderer is stopping.'));
      const busy = threads.length >= limits.threads && threads.every((thread) => thread.running !== undefined);
      if (busy && (waiting.length >= limits.maxWaiting || waitingPixels + pixelsOf(job) > limits.maxWaitingPixels)) {
        return Promise.reject(
          new HallmarkError('SERVICE_UNAVAILABLE', 'Too many QR images are being drawn; retry in a second.', {
            retryAfterSeconds: 1,
          }),
        );
      }
      return new Promise<Buffer>((resolve, reject) => {
        waiting.push({ id: nextId++, job, resolve, reject });
        waitingPixels += pixelsOf(job);
        dispatch();
      });
    },
    async close() {
      closed = true;
      for (const pending of waiting.splice(0))
        pending.reject(new HallmarkError('SERVICE_UNAVAILABLE', 'The QR renderer stopped.'));
      waitingPixels = 0;
      await Promise.all(threads.map((thread) => thread.worker.terminate()));
    },
  };
}
