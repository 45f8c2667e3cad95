import { describe, expect, it } from 'vitest';
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
