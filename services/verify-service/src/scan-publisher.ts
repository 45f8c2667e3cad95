import type { Bus, Subscription } from '@hallmark/bus';
import type { Logger } from '@hallmark/runtime';
import { type ScanRecorded, scanRecordedSubject } from './scan-history.ts';

export interface ScanPublisher extends Subscription {
  /** Queues one scan's event; it is published with the others queued within `lingerMs`. */
  record(scan: ScanRecorded): void;
}

export interface ScanPublisherOptions {
  /** How long a scan may wait for others to share its event (ms). */
  lingerMs?: number;
  /** Scans per event at most; a full event leaves at once. */
  maxScans?: number;
}

/**
 * Publishes scan events several scans at a time: one `scans.recorded` event carries every scan
 * recorded within a few milliseconds, `{ scans: ScanRecorded[] }`. Under load that is one stored
 * JetStream message per batch instead of one acknowledged write per verification (the largest part
 * of the bus's and the broker's work per scan, measured). The answer to a verification never waits
 * for it; a scan still queued when the process dies is lost, as an unpublished single event was.
 * After `stop` every scan is published on its own, at once.
 */
export function createScanPublisher(bus: Bus, log: Logger, options: ScanPublisherOptions = {}): ScanPublisher {
  const lingerMs = options.lingerMs ?? 5;
  const maxScans = options.maxScans ?? 256;
  let queued: ScanRecorded[] = [];
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const publishing = new Set<Promise<void>>();

  const publish = (scans: ScanRecorded[]) => {
    const sent = bus
      .publishEvent(scanRecordedSubject, { scans })
      .catch((error: unknown) => log.warn({ err: error, scans: scans.length }, 'scan event not published'))
      .finally(() => publishing.delete(sent));
    publishing.add(sent);
  };
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (queued.length === 0) return;
    const scans = queued;
    queued = [];
    publish(scans);
  };

  return {
    record(scan) {
      if (stopped) {
        publish([scan]);
        return;
      }
      queued.push(scan);
      if (queued.length >= maxScans) flush();
      else timer ??= setTimeout(flush, lingerMs);
    },
    async stop() {
      stopped = true;
      flush();
      await Promise.all(publishing);
    },
  };
}
