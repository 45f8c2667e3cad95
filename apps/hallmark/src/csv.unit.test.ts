import { parseCsv } from '@hallmark/contracts';
import { describe, expect, it } from 'vitest';
import { csvLine } from './csv.ts';

describe('CSV as the CLI writes it', () => {
  it('writes what it reads back', () => {
    const values = ['plain', 'with,comma', 'with "quote"', 'two\nlines', ''];
    expect([...parseCsv(csvLine(values))]).toEqual([{ fields: values, line: 1 }]);
    expect(csvLine([1, null, undefined, 'x'])).toBe('1,,,x\r\n');
  });

  it('writes text a spreadsheet would run as a formula with a leading quote, numbers as they are', () => {
    expect(csvLine(['=HYPERLINK("x",1)', '-2+3', '+1', '@SUM(A1)', '\tx', 'plain', -2])).toBe(
      `'=HYPERLINK(""x"",1),'-2+3,'+1,'@SUM(A1),'\tx,plain,-2\r\n`.replace(`'=HYPERLINK(""x"",1)`, `"'=HYPERLINK(""x"",1)"`),
    );
    // After a `;` too: a spreadsheet splitting on `;` starts a cell there.
    expect(csvLine(['X;=1+1', 'L;-2;@SUM(A1)', 'A;B'])).toBe("X;'=1+1,L;'-2;'@SUM(A1),A;B\r\n");
  });
});
