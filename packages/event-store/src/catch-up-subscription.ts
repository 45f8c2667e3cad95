import type { CheckpointStore, EventPage, EventSubscription, SubscribeOptions } from './event-store.ts';
import { ProjectionMovedOn } from './sql-projection.ts';

export interface PollingSource {
  /**
   * A page of the events after `after`; with `types`, the events of other types may be left out,
   * except the page's last, which may come without its data and metadata (the subscription drops
   * them; its cursor moves past them, and a page is empty only when nothing followed `after`); with
   * `dataTypes`, the events of other types may come without their data (`{}`). `passed`: how many
   * events the page went past, those left out included (its events' count when absent): a page
   * that passed fewer than the limit is the end of what is readable, and only then does the
   * subscription linger.
   */
  readAll(options: {
    after?: string;
    limit?: number;
    types?: readonly string[];
    dataTypes?: readonly string[];
  }): Promise<EventPage & { passed?: number }>;
  /** Calls `onAppend` when new events may be readable; resolves with a function that stops it. */
  watch(onAppend: () => void): Promise<() => Promise<void>>;
}

const retryDelayMs = 1_000;
/**
 * A failing read or batch is tried again after 1, 2, 4 s, then every 5 s, and no notification or
 * reader cuts that pause short (before, each write's notification and each waiting reader did: a
 * batch that failed every time, as one replayed over rows already stored, was tried hundreds of times
 * a second, each a transaction and a warning). A batch refused because another replica moved the
 * checkpoint is no failure: it goes on from the stored checkpoint at the next wake.
 */
const maxRetryDelayMs = 5_000;
/**
 * Quick looks after an empty read that followed a wake-up: after 50, 100, … 1,600 ms, then every
 * 1,600 ms, for up to 30 s from the first of them (an older transaction of this database, a slow
 * writer, can hold the readable horizon back that long; a wake for events already read costs about
 * 20 looks).
 */
const quickLookMaxPauseMs = 1_600;
const quickLooksForMs = 30_000;

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
  const types = options.eventTypes;
  const dataTypes = options.dataOfTypes;
  const wanted = types ? new Set(types) : undefined;
  let stopping = false;
  let wake: (() => void) | undefined;
  let pendingWake = false;

  /** Resolves true when woken (a notification, a reader, stop), false when the time ran out. */
  const sleep = (ms: number) =>
    new Promise<boolean>((resolve) => {
      if (pendingWake || stopping) {
        pendingWake = false;
        resolve(true);
        return;
      }
      const timer = setTimeout(() => done(false), ms);
      function done(woken: boolean) {
        clearTimeout(timer);
        wake = undefined;
        resolve(woken);
      }
      wake = () => done(true);
    });

  /** Waits `ms` whatever wakes come meanwhile (they are spent); only a stop ends it sooner. */
  const pause = async (ms: number) => {
    const until = performance.now() + ms;
    while (!stopping && performance.now() < until) await sleep(until - performance.now());
  };

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
    // Woken for events that a read then did not find: a transaction older than theirs (in any
    // database of the server) was still in flight, holding the readable horizon back. Look again
    // soon, a few times with growing pauses, rather than only at the poll interval. The start counts
    // as a wake until the first empty read (the end of the catch-up): events appended before the
    // watch began, and held back then, bring no notification.
    let woken = true;
    let caughtUp = false;
    let horizonRetries = 0;
    /** When the quick looks began (the first empty read after a wake-up), by performance.now(). */
    let lookingSince: number | undefined;
    /** Failures in a row, for the pause before the next try. */
    let failures = 0;
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
          const page = await source.readAll({
            ...(cursor === undefined ? {} : { after: cursor }),
            limit: batchSize,
            ...(types ? { types } : {}),
            ...(dataTypes ? { dataTypes } : {}),
          });
          if (page.events.length === 0) {
            failures = 0;
            const now = performance.now();
            if (woken) lookingSince ??= now;
            const soon: boolean = woken && now - (lookingSince ?? now) < quickLooksForMs;
            horizonRetries = soon ? horizonRetries + 1 : 0;
            if (!soon) lookingSince = undefined;
            caughtUp = true;
            const pause: number = soon
              ? Math.min(options.pollIntervalMs, quickLookMaxPauseMs, 25 * 2 ** horizonRetries)
              : options.pollIntervalMs;
            woken = (await sleep(pause)) || soon;
            continue;
          }
          if (caughtUp) woken = false;
          horizonRetries = 0;
          lookingSince = undefined;
          await options.handle(wanted ? page.events.filter((event) => wanted.has(event.type)) : page.events, page.cursor);
          await checkpoints.save(options.name, page.cursor);
          cursor = page.cursor;
          failures = 0;
          // A short page is the end of what is readable: linger then, never while catching up (a
          // typed page is short whenever it left events out, though the log goes on).
          if (options.lingerMs && (page.passed ?? page.events.length) < batchSize && !stopping) await linger(options.lingerMs);
        } catch (error) {
          options.onError?.(error);
          if (error instanceof ProjectionMovedOn) {
            failures = 0;
            await sleep(retryDelayMs);
          } else {
            failures += 1;
            await pause(Math.min(retryDelayMs * 2 ** (failures - 1), maxRetryDelayMs));
          }
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
