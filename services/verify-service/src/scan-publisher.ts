import type { Bus, Subscription } from '@hallmark/bus';
import type { Logger } from '@hallmark/runtime';
import { type ScanRecorded, scanRecordedSubject } from './scan-history.ts';

export interface ScanPublisher extends Subscription {
  /** Queues one scan's event; it is published with the others queued within `lingerMs`. */
  record(scan: ScanRecorded): void;
  /**
   * Publishes one scan's event at once (with whatever else is queued) and resolves when the bus
   * has stored it (JetStream's acknowledgement); rejects when it was not stored. For the scans a
   * webhook is derived from (SUSPICIOUS, COUNTERFEIT), whose answer must not go out before them.
   */
  recordDurably(scan: ScanRecorded): Promise<void>;
}

export interface ScanPublisherOptions {
  /** How long a scan may wait for others to share its event (ms). */
  lingerMs?: number;
  /** Scans per event at most; a full event leaves at once. */
  maxScans?: number;
  /**
   * How long a durable scan waits for the store's acknowledgement before it counts as refused (ms):
   * well under the gateway's request timeout, so the caller hears 503 from us, not a timeout
   * while the store may still take it.
   */
  durableTimeoutMs?: number;
}

/**
 * Publishes scan events several scans at a time: one `scans.recorded` event carries every scan
 * recorded within a few milliseconds, `{ scans: ScanRecorded[] }`. Under load that is one stored
 * JetStream message per batch instead of one acknowledged write per verification (the largest part
 * of the bus's and the broker's work per scan, measured). An AUTHENTIC answer does not wait for it: a
 * scan still queued when the process dies is lost from the history, and nothing is told of it. A
 * SUSPICIOUS or COUNTERFEIT answer does (`recordDurably`): its scan causes a webhook, so it is stored
 * before the answer leaves. After `stop` every scan is published on its own, at once.
 */
export function createScanPublisher(bus: Bus, log: Logger, options: ScanPublisherOptions = {}): ScanPublisher {
  const lingerMs = options.lingerMs ?? 5;
  const maxScans = options.maxScans ?? 256;
  const durableTimeoutMs = options.durableTimeoutMs ?? 2_000;
  let queued: ScanRecorded[] = [];
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const publishing = new Set<Promise<void>>();

  /** Publishes one event; the promise is the bus's answer (a caller may wait for it), tracked for `stop`. */
  const publish = (scans: ScanRecorded[], durable?: ScanRecorded): Promise<void> => {
    // A durable scan's event is stored once even if a slow acknowledgement made us send it again.
    const sent = bus.publishEvent(
      scanRecordedSubject,
      { scans },
      durable ? { messageId: `scan-${durable.scanId}`, timeoutMs: durableTimeoutMs } : {},
    );
    const settled = sent
      .catch((error: unknown) => log.warn({ err: error, scans: scans.length }, 'scan event not published'))
      .finally(() => publishing.delete(settled));
    publishing.add(settled);
    return sent;
  };
  const flush = (durable?: ScanRecorded): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (queued.length === 0) return Promise.resolve();
    const scans = queued;
    queued = [];
    return publish(scans, durable);
  };
  /** A flush nobody waits for: its failure is logged by `publish`. */
  const flushInBackground = () => {
    flush().catch(() => undefined);
  };

  return {
    record(scan) {
      if (stopped) {
        publish([scan]).catch(() => undefined);
        return;
      }
      queued.push(scan);
      if (queued.length >= maxScans) flushInBackground();
      else timer ??= setTimeout(flushInBackground, lingerMs);
    },
    recordDurably(scan) {
      if (stopped) return publish([scan], scan);
      queued.push(scan);
      return flush(scan);
    },
    async stop() {
      stopped = true;
      flushInBackground();
      await Promise.all(publishing);
    },
  };
}
