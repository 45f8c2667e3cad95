import { describe, expect, it } from 'vitest';
import { batchFromCsv, csvLine } from './csv.ts';

describe('csvLine', () => {
  it('quotes what needs it and defuses cells a spreadsheet would run as a formula', () => {
    expect(csvLine(['plain', 'a,b', 'say "hi"', null, 3])).toBe('plain,"a,b","say ""hi""",,3');
    expect(csvLine(['=HYPERLINK("x")', '+1', '-2', '@sum'])).toBe(`"'=HYPERLINK(""x"")",'+1,'-2,'@sum`);
    // After a `;` too: a spreadsheet splitting on `;` starts a cell there.
    expect(csvLine(['X;=1+1', 'A;B'])).toBe("X;'=1+1,A;B");
  });
});

describe('batchFromCsv', () => {
  it('makes generate bodies by column name, other columns as metadata, and names bad rows by their line', () => {
    const batch = batchFromCsv(
      'GTIN,Serial Number,lot,Expiry,name\n09506000134352,A-1,L1,2031-01-31,Pen\n09506000134352,,L1,,Cap\n,B-2\n',
    );
    expect(batch.fileError).toBeUndefined();
    expect(batch.rows).toEqual([
      {
        line: 2,
        body: {
          gtin: '09506000134352',
          serialNumber: 'A-1',
          batchNumber: 'L1',
          expiryDate: '2031-01-31',
          metadata: { name: 'Pen' },
        },
      },
    ]);
    expect(batch.problems).toEqual([
      { line: 3, message: 'serialNumber missing' },
      { line: 4, message: 'gtin missing' },
    ]);
  });

  it('sends 8 to 13 digits (a GTIN-8, -12 or -13, or one a spreadsheet stripped of its zeros) as a GTIN-14; other values as they are', () => {
    const batch = batchFromCsv(
      'gtin,serial\n9506000134352,A-1\n96385074,A-2\n09506000134352,A-3\n36000291452,A-4\nABC,A-5\n1234567,A-6\n',
    );
    expect(batch.rows.map((row) => row.body.gtin)).toEqual([
      '09506000134352',
      '00000096385074',
      '09506000134352',
      '00036000291452',
      'ABC',
      '1234567',
    ]);
  });

  it('names rows by the line an editor shows, blank lines and line breaks inside quotes counted', () => {
    // The console's own reader dropped blank lines before numbering the rows: a row on line 5 was
    // reported as line 3, and the brand fixed the wrong row.
    const batch = batchFromCsv('\uFEFFgtin,serial,name\r\n\r\n09506000134352,A-1,"two\nlines"\n,,\n09506000134352,,x\n');
    expect(batch.rows).toEqual([
      { line: 3, body: { gtin: '09506000134352', serialNumber: 'A-1', metadata: { name: 'two\nlines' } } },
    ]);
    expect(batch.problems).toEqual([{ line: 6, message: 'serialNumber missing' }]);
  });

  it('refuses a file that is not CSV, or whose header names a field twice, naming why', () => {
    // A quote never closed swallowed every later row into one field, and the rows were silently lost.
    expect(batchFromCsv('gtin,serial\n09506000134352,"A-1\n09506000134352,A-2\n').fileError).toBe(
      'The file cannot be read as CSV: a quoted field opened on line 2 never closes.',
    );
    // “lot” and “batch” are one field; “name” twice one metadata entry: the second replaced the first.
    expect(batchFromCsv('gtin,serial,lot,batch\n09506000134352,A-1,L1,L2\n').fileError).toBe(
      'The first line names “batch” twice, or two columns for one field.',
    );
    expect(batchFromCsv('gtin,serial,name,name\n09506000134352,A-1,x,y\n').fileError).toMatch(/names “name” twice/);
    expect(batchFromCsv('gtin,serial,,\n09506000134352,A-1,x,y\n').rows).toHaveLength(1);
  });

  it('refuses a file without a header naming gtin and serial', () => {
    expect(batchFromCsv('09506000134352,A-1\n').fileError).toMatch(/first line must name the columns/);
    expect(batchFromCsv('').fileError).toBe('The file is empty.');
  });
});
