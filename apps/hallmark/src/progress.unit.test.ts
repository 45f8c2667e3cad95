import { describe, expect, it } from 'vitest';
import { createProgress, renderProgress } from './progress.ts';

/** A stand-in for stderr that records what is written. */
function terminal(isTTY: boolean, columns = 100) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns, write: (text: string) => writes.push(text) } };
}

describe('progress bar', () => {
  it('draws nothing at all when stderr is not a terminal', () => {
    const { writes, stream } = terminal(false);
    const progress = createProgress({ label: 'generating', unit: 'rows', total: 10, stream });
    progress.advance(5);
    progress.setTotal(20);
    progress.advance(15);
    progress.finish();
    expect(writes).toEqual([]);
  });

  it('redraws one line in place on a terminal, at most every 100 ms, and wipes it at the end', () => {
    let now = 0;
    const { writes, stream } = terminal(true);
    const progress = createProgress({ label: 'generating', unit: 'rows', total: 1000, stream, now: () => now });
    expect(writes).toEqual(['\r' + 'generating [' + '.'.repeat(30) + '] 0% 0/1,000 rows\x1b[K']);
    now = 50;
    progress.advance(100); // within 100 ms of the last drawing: skipped
    expect(writes).toHaveLength(1);
    now = 1000;
    progress.advance(400);
    expect(writes[1]).toBe(`\rgenerating [${'#'.repeat(15)}${'.'.repeat(15)}] 50% 500/1,000 rows 500/s 1s left\x1b[K`);
    now = 1010;
    progress.advance(500); // the last step is always drawn
    expect(writes[2]).toMatch(/^\rgenerating \[#{30}\] 100% 1,000\/1,000 rows/);
    progress.finish();
    progress.finish();
    expect(writes.slice(3)).toEqual(['\r\x1b[K']);
  });

  it('shows the count and the rate when the total is unknown, and never wraps a narrow terminal', () => {
    expect(
      renderProgress({ label: 'replaying', unit: 'events', done: 12_345, total: undefined, elapsedMs: 2000, columns: 80 }),
    ).toBe('replaying 12,345 events 6,173/s');
    const narrow = renderProgress({ label: 'exporting', unit: 'events', done: 5, total: 10, elapsedMs: 1000, columns: 30 });
    expect(narrow.length).toBeLessThan(30);
    expect(renderProgress({ label: 'generating', unit: 'rows', done: 10, total: 4000, elapsedMs: 1000, columns: 120 })).toContain(
      '6m39s left',
    );
  });
});
