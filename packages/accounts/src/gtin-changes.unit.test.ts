import { describe, expect, it } from 'vitest';
import { changedClaimOf, createGtinChanges } from './gtin-changes.ts';

describe('GTIN changes heard by broadcast', () => {
  it('drops only the GTIN a change names, and what a changed prefix covers', () => {
    const changes = createGtinChanges();
    const loaded = changes.stamp();
    changes.changed({ kind: 'gtin', value: '09506000134376' });
    expect(changes.isCurrent('09506000134376', loaded)).toBe(false);
    expect(changes.isCurrent('09506000134383', loaded)).toBe(true);
    // Loaded after the change: current.
    expect(changes.isCurrent('09506000134376', changes.stamp())).toBe(true);

    const beforePrefix = changes.stamp();
    changes.changed({ kind: 'prefix', value: '9506001' });
    expect(changes.isCurrent('09506001000014', beforePrefix)).toBe(false);
    expect(changes.isCurrent('19506001000011', beforePrefix)).toBe(false);
    expect(changes.isCurrent('09506000134383', beforePrefix)).toBe(true);
    expect(changes.isCurrent('09506001000014', changes.stamp())).toBe(true);
  });

  it('drops everything for a change that does not say what changed', () => {
    const changes = createGtinChanges();
    const loaded = changes.stamp();
    changes.changed(changedClaimOf({ something: 'else' }));
    expect(changes.isCurrent('09506000134383', loaded)).toBe(false);
    expect(changes.isCurrent('09506000134383', changes.stamp())).toBe(true);
  });

  it('reads a broadcast’s claim: a GTIN-14 or a 4–12 digit prefix, nothing else', () => {
    expect(changedClaimOf({ gtin: '09506000134376' })).toEqual({ kind: 'gtin', value: '09506000134376' });
    expect(changedClaimOf({ prefix: '9506000' })).toEqual({ kind: 'prefix', value: '9506000' });
    for (const payload of [undefined, null, 'x', {}, { gtin: '9506000134376' }, { gtin: 9506000134376 }, { prefix: '123' }]) {
      expect(changedClaimOf(payload)).toBeUndefined();
    }
  });
});
