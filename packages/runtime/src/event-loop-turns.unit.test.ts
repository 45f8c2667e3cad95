import { describe, expect, it } from 'vitest';
import { passesOf, recordingLoopPasses } from '../../../test/support/loop-passes.ts';
import { createEventLoopTurns } from './event-loop-turns.ts';

describe('createEventLoopTurns', () => {
  it('lets at most perTurn waiters go on a pass of the loop, first come first served, each onTurn as its turn comes', async () => {
    // What ran in order: each waiter as it went on, the loop's passes as "|".
    const ran: string[] = [];
    const turns = createEventLoopTurns(2);
    const onTurns: string[] = [];
    await recordingLoopPasses(ran, () =>
      Promise.all(
        ['a', 'b', 'c', 'd', 'e'].map((name) =>
          turns
            .next(() => onTurns.push(name))
            .then(() => {
              expect(onTurns).toContain(name);
              ran.push(name);
            }),
        ),
      ),
    );
    expect(onTurns).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(ran.filter((entry) => entry !== '|')).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(passesOf(ran)).toEqual(['a b', 'c d', 'e']);
  });
});
