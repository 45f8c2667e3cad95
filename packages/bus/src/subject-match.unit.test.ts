import { describe, expect, it } from 'vitest';
import { subjectMatches } from './subject-match.ts';

describe('subjectMatches', () => {
  it.each([
    ['a.b', 'a.b', true],
    ['a.b', 'a.c', false],
    ['a.*', 'a.b', true],
    ['a.*', 'a.b.c', false],
    ['a.>', 'a.b.c', true],
    ['a.>', 'a', false],
    ['*.b', 'x.b', true],
    ['a.b.c', 'a.b', false],
  ])('%s against %s is %s', (pattern, subject, expected) => {
    expect(subjectMatches(pattern, subject)).toBe(expected);
  });
});
