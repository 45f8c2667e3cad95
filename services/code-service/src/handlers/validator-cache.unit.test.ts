import { describe, expect, it } from 'vitest';
import { createValidatorCache } from './validator-cache.ts';

describe('validator cache', () => {
  it('keeps other owners’ validators while one owner cycles through more versions than its share', () => {
    const cache = createValidatorCache<string>({ maxEntries: 10, maxPerOwner: 4 });
    let compiles = 0;
    const compile = (name: string) => () => {
      compiles += 1;
      return name;
    };
    for (const owner of ['brand-a', 'brand-b']) cache.get(owner, 'sch_1@1', compile(`${owner} v1`));
    // A tenant cycling through 1,000 versions of its schema.
    for (let version = 1; version <= 1_000; version++) cache.get('cycler', `sch_9@${version}`, compile(`v${version}`));
    expect(cache.holds('brand-a', 'sch_1@1')).toBe(true);
    expect(cache.holds('brand-b', 'sch_1@1')).toBe(true);
    // Its own most recent four are kept; the rest dropped.
    expect(cache.holds('cycler', 'sch_9@1000')).toBe(true);
    expect(cache.holds('cycler', 'sch_9@997')).toBe(true);
    expect(cache.holds('cycler', 'sch_9@996')).toBe(false);
    expect(cache.size).toBe(6);
    compiles = 0;
    expect(cache.get('brand-a', 'sch_1@1', compile('again'))).toBe('brand-a v1');
    expect(compiles).toBe(0);
  });

  it('drops the least recently used of all once full, and keeps owners apart under one key', () => {
    const cache = createValidatorCache<string>({ maxEntries: 3, maxPerOwner: 3 });
    cache.get('a', 'k', () => 'a');
    cache.get('b', 'k', () => 'b');
    cache.get('c', 'k', () => 'c');
    expect(cache.get('a', 'k', () => 'recompiled')).toBe('a'); // used: most recent now
    cache.get('d', 'k', () => 'd');
    expect(cache.holds('b', 'k')).toBe(false);
    expect(['a', 'c', 'd'].every((owner) => cache.holds(owner, 'k'))).toBe(true);
    expect(cache.get('c', 'k', () => 'other')).toBe('c');
  });

  it('keeps nothing for a compile that throws', () => {
    const cache = createValidatorCache<string>({ maxEntries: 3, maxPerOwner: 3 });
    expect(() =>
      cache.get('a', 'k', () => {
        throw new Error('unusable');
      }),
    ).toThrow('unusable');
    expect(cache.size).toBe(0);
  });
});
