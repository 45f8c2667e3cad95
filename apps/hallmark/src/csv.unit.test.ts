import { describe, expect, it } from 'vitest';
import { CsvSyntaxError, csvLine, parseCsv } from './csv.ts';

describe('CSV', () => {
  it('reads quoted fields, doubled quotes, line breaks inside quotes, CRLF and LF, and the line each record starts on', () => {
    const text = '\ufeffgtin,serial,name\r\n1,"a,b","say ""hi"""\r\n\r\n2,c,"two\nlines"\n3,d,\n';
    expect([...parseCsv(text)]).toEqual([
      { fields: ['gtin', 'serial', 'name'], line: 1 },
      { fields: ['1', 'a,b', 'say "hi"'], line: 2 },
      { fields: ['2', 'c', 'two\nlines'], line: 4 },
      { fields: ['3', 'd', ''], line: 6 },
    ]);
    expect([...parseCsv('a,b')]).toEqual([{ fields: ['a', 'b'], line: 1 }]);
  });

  it('names the line of a quote that never closes, and of text after a closing quote', () => {
    expect(() => [...parseCsv('a,b\n1,"open\n2,3\n')]).toThrow(
      new CsvSyntaxError('a quoted field opened on line 2 never closes', 2),
    );
    expect(() => [...parseCsv('a\n"x"y\n')]).toThrow(/line 2: text after a closing quote/);
  });

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
