import { describe, expect, it } from 'vitest';
import { csvCell, prefersCsv } from './scans.ts';

describe('CSV cells', () => {
  it('prefixes a quote to text a spreadsheet would run as a formula', () => {
    for (const lead of ['=', '+', '-', '@', '\t', '\r']) expect(csvCell(`${lead}1+1`).includes(`'${lead}`)).toBe(true);
    expect(csvCell('SA-1')).toBe('SA-1');
    expect(csvCell('-3.5', false)).toBe('-3.5');
  });

  it('prefixes a quote to formula text after a `;` too, where a spreadsheet splitting on `;` starts a cell', () => {
    expect(csvCell('X;=1+1')).toBe("X;'=1+1");
    expect(csvCell('L;-2+3;@SUM(A1)')).toBe("L;'-2+3;'@SUM(A1)");
    expect(csvCell('A;B')).toBe('A;B');
    expect(csvCell('=1;+2')).toBe("'=1;'+2");
    // Quotes between the `;` and the formula do not hide it from such a spreadsheet.
    expect(csvCell('X;"=1+1')).toBe('"X;""\'=1+1"');
  });

  it('quotes commas, quotes and line breaks (RFC 4180)', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('=HYPER("x",1)')).toBe(`"'=HYPER(""x"",1)"`);
  });
});

describe('an Accept header asking for CSV', () => {
  it('is text/csv with a quality above 0, no lower than JSON’s', () => {
    for (const accept of [
      'text/csv',
      'text/csv, application/json',
      'application/json;q=0.5, text/csv',
      'TEXT/CSV;Q=0.9',
      'text/csv, */*',
      'text/csv;q=0.9, application/json;q=0.5, */*',
      'text/csv;q=0.5, application/json;q=0.4, */*',
    ])
      expect(prefersCsv(accept), accept).toBe(true);
    for (const accept of [
      '',
      'application/json',
      'application/json, text/csv;q=0',
      'text/csv;q=0.5, application/json',
      'text/csvx',
      // JSON's quality is that of the most specific range covering it (a review of 2026-12-05 found
      // `text/csv;q=0.5, */*` answered CSV).
      'text/csv;q=0.5, */*',
      'text/csv;q=0.5, application/*',
      '*/*',
      'text/*',
      'application/json;q=1, application/*;q=0.1, text/csv;q=0.9',
    ])
      expect(prefersCsv(accept), accept).toBe(false);
  });
});
