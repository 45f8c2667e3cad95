import { randomUUID } from 'node:crypto';
import { createInProcessBus } from '@hallmark/bus';
import { createLogger } from '@hallmark/runtime';
import { describe, expect, it } from 'vitest';
import { type ScanRecorded, type ScansRecorded, scanRecordedSubject } from './scan-history.ts';
import { createScanPublisher, type ScanPublisherOptions } from './scan-publisher.ts';

const log = createLogger({ instance: 'test', level: 'silent' });

const scan = (scanNumber: number): ScanRecorded => ({
  scanId: randomUUID(),
  environment: 'live',
  gtin: '09506000134352',
  serial: 'PUB-1',
  verdict: 'AUTHENTIC',
  riskIndicators: [],
  scanNumber,
  at: new Date().toISOString(),
  verifiedBy: 'acc_test',
});

/** A publisher on a fresh in-process bus, and every `scans.recorded` event the bus delivers, in order. */
async function publisherOnBus(options: ScanPublisherOptions) {
  const bus = createInProcessBus();
  const events: ScansRecorded[] = [];
  await bus.consumeEvents({
    durable: `test-${randomUUID()}`,
    subject: scanRecordedSubject,
    async handle(event) {
      events.push(event.payload as ScansRecorded);
    },
  });
  return { bus, events, publisher: createScanPublisher(bus, log, options) };
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('scan publisher', () => {
  it('puts the scans of a few milliseconds into one event, at most maxScans each, in order', async () => {
    const { bus, events, publisher } = await publisherOnBus({ lingerMs: 20, maxScans: 256 });
    for (let i = 1; i <= 600; i++) publisher.record(scan(i));
    await until(() => events.flatMap((event) => event.scans).length === 600);
    expect(events.map((event) => event.scans.length)).toEqual([256, 256, 88]);
    expect(events.flatMap((event) => event.scans.map((recorded) => recorded.scanNumber))).toEqual(
      Array.from({ length: 600 }, (_, i) => i + 1),
    );
    await publisher.stop();
    await bus.drain();
  });

  it('waits no longer than the linger for more scans', async () => {
    const { bus, events, publisher } = await publisherOnBus({ lingerMs: 10 });
    const started = Date.now();
    publisher.record(scan(1));
    await until(() => events.length === 1);
    expect(events[0]?.scans).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1_000);
    await publisher.stop();
    await bus.drain();
  });

  it('publishes what is queued when stopped, and each later scan at once', async () => {
    const { bus, events, publisher } = await publisherOnBus({ lingerMs: 60_000 });
    publisher.record(scan(1));
    publisher.record(scan(2));
    await publisher.stop();
    await until(() => events.length === 1);
    expect(events[0]?.scans.map((recorded) => recorded.scanNumber)).toEqual([1, 2]);
    publisher.record(scan(3));
    await until(() => events.length === 2);
    expect(events[1]?.scans.map((recorded) => recorded.scanNumber)).toEqual([3]);
    await bus.drain();
  });
});

describe('scan publisher, durable scans', () => {
  it('publishes a durable scan at once with what is queued, and resolves only once the bus stored it', async () => {
    const { bus, events, publisher } = await publisherOnBus({ lingerMs: 60_000 });
    publisher.record(scan(1));
    let stored = false;
    const durable = publisher.recordDurably({ ...scan(2), verdict: 'SUSPICIOUS' }).then(() => {
      stored = true;
    });
    expect(stored).toBe(false);
    await durable;
    await until(() => events.length === 1);
    expect(events[0]?.scans.map((recorded) => recorded.scanNumber)).toEqual([1, 2]);
    await publisher.stop();
    await bus.drain();
  });

  it('rejects a durable scan the bus refused, and a refused background batch does not throw', async () => {
    const bus = createInProcessBus();
    const refusing = { ...bus, publishEvent: async () => Promise.reject(new Error('stream unavailable')) } as typeof bus;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const publisher = createScanPublisher(refusing, log, { lingerMs: 1, maxScans: 2 });
      publisher.record(scan(1));
      publisher.record(scan(2)); // full: published at once, refused, logged
      publisher.record(scan(3)); // after the linger, refused, logged
      await expect(publisher.recordDurably({ ...scan(4), verdict: 'COUNTERFEIT' })).rejects.toThrow('stream unavailable');
      await new Promise((resolve) => setTimeout(resolve, 20));
      await publisher.stop();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await bus.drain();
    }
  });
});
