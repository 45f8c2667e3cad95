import { describe, expect, it } from 'vitest';
import { printableMultilineTextPattern, printableNonBlankTextPattern, printableTextPattern } from './common.ts';

const printable = new RegExp(printableTextPattern);
const printableNonBlank = new RegExp(printableNonBlankTextPattern);
const printableMultiline = new RegExp(printableMultilineTextPattern);

describe('text others are shown', () => {
  it('takes names in any script, with spaces and marks', () => {
    for (const name of ['client-jane', 'Zoë Müller', '李小龙', 'Maison d’Art', ' spaced ', 'Ōsaka 2']) {
      expect(printable.test(name), name).toBe(true);
      expect(printableNonBlank.test(name), name).toBe(true);
    }
  });

  it('refuses control characters, line and paragraph separators and text-direction characters', () => {
    for (const name of ['a\nb', 'a\tb', 'a\u001bb', 'a\u0085b', 'a\u2028b', 'a\u2029b', 'a\u202eb', 'a\u2066b', 'a\u061cb']) {
      expect(printable.test(name), JSON.stringify(name)).toBe(false);
      expect(printableNonBlank.test(name), JSON.stringify(name)).toBe(false);
    }
  });

  it('refuses, where a name is required, one of only characters that print nothing', () => {
    for (const name of [
      ' ',
      '\u00a0',
      '\u200b',
      '\u200b\u200d',
      '\u2060\u2060',
      '\u3164',
      '\u115f',
      '\ufeff',
      '\u2800',
      '\u00ad',
    ]) {
      expect(printableNonBlank.test(name), JSON.stringify(name)).toBe(false);
    }
    // One character that shows is enough; invisible ones beside it are not refused here.
    expect(printableNonBlank.test('\u200bjane')).toBe(true);
  });
});

describe('several lines of text others are shown', () => {
  it('takes line breaks and tabs, and refuses other control characters and text-direction characters', () => {
    expect(printableMultiline.test('Dial: original.\nCase:\tpolished.\r\n')).toBe(true);
    for (const text of ['a\u0007b', 'a\u001bb', 'a\u0085b', 'a\u202eb', 'a\u2066b', 'a\u200fb']) {
      expect(printableMultiline.test(text), JSON.stringify(text)).toBe(false);
    }
  });
});
