import { describe, expect, it } from 'vitest';
import { CsvSyntaxError, parseCsv } from './csv-records.ts';

describe('CSV records', () => {
  it('reads quoted fields, doubled quotes, line breaks inside quotes, CRLF and LF, and the line each record starts on', () => {
    const text = '\ufeffgtin,serial,name\r\n1,"a,b","say ""hi"""\r\n\r\n2,c,"two\nlines"\n3,d,\n';
    expect([...parseCsv(text)]).toEqual([
      { fields: ['gtin', 'serial', 'name'], line: 1 },
      { fields: ['1', 'a,b', 'say "hi"'], line: 2 },
      { fields: ['2', 'c', 'two\nlines'], line: 4 },
      { fields: ['3', 'd', ''], line: 6 },
    ]);
    expect([...parseCsv('a,b')]).toEqual([{ fields: ['a', 'b'], line: 1 }]);
    // A spreadsheet's empty rows are its cells with no values: skipped as blank lines are.
    expect([...parseCsv('a,b\n,\n"",\n1,2\n')]).toEqual([
      { fields: ['a', 'b'], line: 1 },
      { fields: ['1', '2'], line: 4 },
    ]);
  });

  it('names the line of a quote that never closes, and of text after a closing quote', () => {
    expect(() => [...parseCsv('a,b\n1,"open\n2,3\n')]).toThrow(
      new CsvSyntaxError('a quoted field opened on line 2 never closes', 2),
    );
    expect(() => [...parseCsv('a\n"x"y\n')]).toThrow(/line 2: text after a closing quote/);
  });
});
