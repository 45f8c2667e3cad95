import { afterEach, describe, expect, it, vi } from 'vitest';
import { removalTurnMs, removeChunksForATurn } from './removal-turn.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('removeChunksForATurn', () => {
  it('removes chunk after chunk until none is found, a chunk taken meanwhile read again', async () => {
    const chunks = [
      { found: 500, removed: 500 },
      { found: 500, removed: 0 },
      { found: 500, removed: 500 },
      { found: 0, removed: 0 },
    ];
    let asked = 0;
    expect(await removeChunksForATurn(async () => chunks[asked++] as (typeof chunks)[number])).toEqual({
      removed: 1000,
      more: false,
    });
    expect(asked).toBe(4);
  });

  it('stops after its turn and says more may be left', async () => {
    let clock = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => clock);
    let asked = 0;
    const outcome = await removeChunksForATurn(async () => {
      asked += 1;
      clock += removalTurnMs / 2;
      return { found: 500, removed: 500 };
    });
    expect(outcome).toEqual({ removed: 1000, more: true });
    expect(asked).toBe(2);
  });
});
