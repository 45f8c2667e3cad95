import { describe, expect, it } from 'vitest';
import { removeInTurns } from './removals-in-turns.ts';

describe('removeInTurns', () => {
  it('asks again while a turn says more, and sums what each removed', async () => {
    const turns = [
      { removed: 500, more: true },
      { removed: 500, more: true },
      { removed: 20, more: false },
    ];
    let asked = 0;
    const answer = await removeInTurns(async () => turns[asked++] as (typeof turns)[number]);
    expect(answer).toEqual({ removed: 1020, more: false });
    expect(asked).toBe(3);
  });

  it('stops once the budget is spent and says more, so the client sends the request again', async () => {
    let clock = 0;
    let asked = 0;
    const answer = await removeInTurns(
      async () => {
        asked += 1;
        clock += 3_000;
        return { removed: 500, more: true };
      },
      { budgetMs: 10_000, now: () => clock },
    );
    expect(answer).toEqual({ removed: 2_000, more: true });
    expect(asked).toBe(4);
  });
});
