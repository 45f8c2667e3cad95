import { describe, expect, it } from 'vitest';
import { passesOf, recordingLoopPasses } from '../../../../test/support/loop-passes.ts';
import { codesPerTurn, mapInTurns } from './event-loop-turns.ts';

/** The item each turn of the event loop taken during `work` came after (-1: before the first). */
async function turnsTakenDuring(work: (onItem: (index: number) => void) => Promise<unknown>): Promise<number[]> {
  const turns: number[] = [];
  let current = -1;
  let watching = true;
  const watch = () => {
    if (!watching) return;
    turns.push(current);
    setImmediate(watch);
  };
  setImmediate(watch);
  await work((index) => {
    current = index;
  });
  watching = false;
  return turns;
}

describe('mapInTurns', () => {
  it('maps every item in order, handing the event loop a turn after each 50', async () => {
    let results: number[] = [];
    const turns = await turnsTakenDuring(async (onItem) => {
      results = await mapInTurns(
        Array.from({ length: 120 }, (_, index) => index),
        (item, index) => {
          onItem(index);
          return item * 2;
        },
      );
    });
    expect(results).toEqual(Array.from({ length: 120 }, (_, index) => index * 2));
    expect(codesPerTurn).toBe(50);
    expect(turns).toEqual([49, 99]);
  });

  it('takes no turn for a request of 50 codes or fewer', async () => {
    const turns = await turnsTakenDuring((onItem) => mapInTurns(Array.from({ length: 50 }), (_, index) => onItem(index)));
    expect(turns).toEqual([]);
  });
});

describe('turns shared by requests', () => {
  it('lets one request go on a turn, the waiting ones in the order they came, so the loop polls between any two slices', async () => {
    // What ran in order: a slice's first item as "<request><item>", the loop's turns as "|".
    const ran: string[] = [];
    const request = (name: string) =>
      mapInTurns(Array.from({ length: 3 * codesPerTurn }), (_, index) => {
        if (index % codesPerTurn === 0) ran.push(`${name}${index}`);
      });
    await recordingLoopPasses(ran, () => Promise.all([request('a'), request('b'), request('c')]));
    const slices = ran.filter((entry) => entry !== '|');
    // Each request's first slice runs as it is called; every later one waits its turn.
    expect(slices).toEqual(['a0', 'b0', 'c0', 'a50', 'b50', 'c50', 'a100', 'b100', 'c100']);
    // No two slices in one turn of the loop.
    expect(passesOf(ran).every((pass) => pass.split(' ').length <= 1)).toBe(true);
  });
});
