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

  it('refuses a name of only format characters and variation selectors, in every plane', () => {
    // What an attack found accepted as an owner, a title or an actor name (2026-12-06): tag
    // characters, variation selectors, Khmer inherent vowels, the Mongolian free variation
    // selectors, the deprecated format characters, the interlinear annotation characters, and the
    // shorthand, Egyptian and musical format controls beyond U+FFFF.
    for (const name of [
      '\u{E0048}\u{E004D}',
      '\u{E0041}',
      '\u{E0001}',
      '\u{E007F}',
      '\u{E0100}',
      '\u{E01EF}',
      '\uFE0F',
      '\uFE00\uFE0E',
      '\u17B4\u17B5',
      '\u180B',
      '\u180F',
      '\u206A\u206F',
      '\uFFF9\uFFFA\uFFFB',
      '\u{1BCA0}',
      '\u{1BCA3}',
      '\u{13430}',
      '\u{1343F}',
      '\u{1D173}\u{1D174}',
      '\u{1D17A}',
      ' \u{E0020}\uFE0F\u200B ',
    ]) {
      expect(printableNonBlank.test(name), JSON.stringify(name)).toBe(false);
    }
  });

  it('takes characters beyond U+FFFF that show, beside those that do not', () => {
    // The same first units as the format characters above start characters that show: a musical
    // symbol (U+1D11E, U+1D172, U+1D17B), an Egyptian hieroglyph (U+1342F, U+13440), a shorthand
    // letter (U+1BC9F); and an emoji, a CJK ideograph beyond the plane, a flag of tag sequences.
    for (const name of [
      '\u{1D11E}',
      '\u{1D172}',
      '\u{1D17B}',
      '\u{1342F}',
      '\u{13440}',
      '\u{1BC9F}',
      '\u{1F600}',
      '\u{20000}',
      '\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}',
      '\uFE0Fjane',
      'jane\u{E0041}',
    ]) {
      expect(printableNonBlank.test(name), JSON.stringify(name)).toBe(true);
    }
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
