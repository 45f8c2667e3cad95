import type { CheckpointStore, EventPage, EventSubscription, SubscribeOptions } from './event-store.ts';

export interface PollingSource {
  readAll(options: { after?: string; limit?: number }): Promise<EventPage>;
  /** Calls `onAppend` when new events may be readable; resolves with a function that stops it. */
  watch(onAppend: () => void): Promise<() => Promise<void>>;
}

const retryDelayMs = 1_000;

/**
 * Catch up from the checkpoint, then follow live: read a page, hand it over, save the checkpoint,
 * repeat; when a page comes back empty, wait for a wake-up or the poll interval.
 * The poll interval bounds the delay when an event was committed but not yet safely readable
 * (a concurrent transaction older than it was still in flight when the wake-up came).
 */
export function startCatchUpSubscription(
  source: PollingSource,
  defaultCheckpoints: CheckpointStore,
  options: SubscribeOptions & { pollIntervalMs: number },
): EventSubscription {
  const checkpoints = options.checkpoints ?? defaultCheckpoints;
  const batchSize = options.batchSize ?? 500;
  let stopping = false;
  let wake: (() => void) | undefined;
  let pendingWake = false;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (pendingWake || stopping) {
        pendingWake = false;
        resolve();
        return;
      }
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });

  const signal = () => {
    if (wake) wake();
    else pendingWake = true;
  };

  // A linger gathers a trickle of events into one batch; notifications of new events must not cut
  // it short (that is its point), but a reader waiting for the events may (`wake`).
  let urgent = false;
  let cutLinger: (() => void) | undefined;
  const linger = (ms: number) =>
    new Promise<void>((resolve) => {
      if (urgent || stopping) {
        resolve();
        return;
      }
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        cutLinger = undefined;
        resolve();
      }
      cutLinger = done;
    });

  const run = async () => {
    // Watching and the first checkpoint load are retried like any read: a subscription started
    // while the database is away (or whose connection is lost) waits for it instead of dying.
    let unwatch: (() => Promise<void>) | undefined;
    let cursor: string | undefined;
    let loaded = false;
    try {
      while (!stopping) {
        try {
          unwatch ??= await source.watch(signal);
          if (!loaded) {
            cursor = await checkpoints.load(options.name);
            loaded = true;
          }
          // A wake from here on asks for a read after this one.
          urgent = false;
          const page = await source.readAll(cursor === undefined ? { limit: batchSize } : { after: cursor, limit: batchSize });
          if (page.events.length === 0) {
            await sleep(options.pollIntervalMs);
            continue;
          }
          await options.handle(page.events, page.cursor);
          await checkpoints.save(options.name, page.cursor);
          cursor = page.cursor;
          if (options.lingerMs && page.events.length < batchSize && !stopping) await linger(options.lingerMs);
        } catch (error) {
          options.onError?.(error);
          await sleep(retryDelayMs);
          // Another replica may have moved a projection's checkpoint: continue from the stored one.
          if (loaded) cursor = await checkpoints.load(options.name).catch(() => cursor);
        }
      }
    } finally {
      await unwatch?.().catch(() => {});
    }
  };

  const running = run();
  return {
    async stop() {
      stopping = true;
      signal();
      cutLinger?.();
      await running;
    },
    wake() {
      urgent = true;
      cutLinger?.();
      signal();
    },
  };
}
