import { describe, expect, it } from 'vitest';
import { printable } from './terminal-text.ts';

describe('printable', () => {
  it('leaves ordinary text, accents and other scripts as they are', () => {
    expect(printable('Maison Dupré — 東京 line 2')).toBe('Maison Dupré — 東京 line 2');
  });

  it('writes escape sequences, line breaks, tabs and bidi overrides as visible escapes, on one line', () => {
    const name = 'ci\u001b]0;owned\u0007\u001b[2J\nkey_x\tlive\trevoked\u202eevil\u0085';
    const shown = printable(name);
    expect(shown).toBe('ci\\x1b]0;owned\\x07\\x1b[2J\\x0akey_x\\x09live\\x09revoked\\u{202e}evil\\x85');
    expect([...shown].filter((character) => /\p{Cc}/u.test(character) || character === '\u202e')).toEqual([]);
  });

  it('keeps a backslash distinguishable from an escape it writes', () => {
    expect(printable('a\\x1b')).toBe('a\\\\x1b');
    expect(printable('a\u001b')).toBe('a\\x1b');
  });
});
