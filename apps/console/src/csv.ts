// CSV in (read by @hallmark/contracts' parseCsv, as the API and the CLI read it) and out, for batch generation.

import { type CsvRecord, CsvSyntaxError, parseCsv, spreadsheetSafe } from '@hallmark/contracts/csv';
import { asGtin14 } from './gtin.ts';

const needsQuotes = /[",\r\n]/;

/**
 * One CSV line; a field that starts like a formula is prefixed with ' so a spreadsheet does not run
 * it, and so is each part after a `;` that does (a spreadsheet whose list separator is `;` starts a
 * cell there, quotes or not).
 */
export function csvLine(fields: ReadonlyArray<string | number | null | undefined>): string {
  return fields
    .map((value) => {
      const text = spreadsheetSafe(value === null || value === undefined ? '' : String(value));
      return needsQuotes.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
    })
    .join(',');
}

/** Column names the batch takes, and the generate body's field each fills. */
const columns: Readonly<Record<string, 'gtin' | 'serialNumber' | 'batchNumber' | 'expiryDate'>> = {
  gtin: 'gtin',
  serial: 'serialNumber',
  serialnumber: 'serialNumber',
  batch: 'batchNumber',
  batchnumber: 'batchNumber',
  lot: 'batchNumber',
  expiry: 'expiryDate',
  expirydate: 'expiryDate',
};

export interface BatchRow {
  /** The line of the CSV the row is on (the header is line 1). */
  line: number;
  body: Record<string, unknown>;
}

export interface ParsedBatch {
  rows: BatchRow[];
  /** Rows refused before sending (no GTIN or serial), by line. */
  problems: Array<{ line: number; message: string }>;
  /** What is wrong with the file as a whole (no header with gtin and serial). */
  fileError?: string;
}

/**
 * A CSV with a header (gtin, serial or serialNumber, and optionally batch, expiry; any other column is
 * metadata, e.g. name) as generate bodies, one per data row.
 */
export function batchFromCsv(text: string): ParsedBatch {
  let records: CsvRecord[];
  try {
    records = [...parseCsv(text)];
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw error;
    return { rows: [], problems: [], fileError: `The file cannot be read as CSV: ${error.message}.` };
  }
  const [header, ...data] = records;
  if (!header) return { rows: [], problems: [], fileError: 'The file is empty.' };
  const names = header.fields.map((name) => name.trim());
  const fields = names.map((name) => columns[name.toLowerCase().replace(/[\s_-]/g, '')]);
  if (!fields.includes('gtin') || !fields.includes('serialNumber')) {
    return {
      rows: [],
      problems: [],
      fileError:
        'The first line must name the columns, with at least “gtin” and “serial” (optionally “batch”, “expiry”, and metadata such as “name”).',
    };
  }
  // Two columns for one field (“lot” and “batch”, or “name” twice): the second would silently
  // replace the first on every row.
  // (A column without a name is left out, as many as there are.)
  const keys = names.map((name, column) => fields[column] ?? (name ? `metadata ${name}` : `unnamed ${column}`));
  const repeated = names.find((_, column) => keys.indexOf(keys[column] as string) !== column);
  if (repeated !== undefined) {
    return { rows: [], problems: [], fileError: `The first line names “${repeated}” twice, or two columns for one field.` };
  }
  const rows: BatchRow[] = [];
  const problems: ParsedBatch['problems'] = [];
  for (const { fields: values, line } of data) {
    const body: Record<string, unknown> = {};
    const metadata: Record<string, string> = {};
    names.forEach((name, column) => {
      const value = (values[column] ?? '').trim();
      if (!value) return;
      const field = fields[column];
      // A GTIN-13 (or one a spreadsheet stripped of its leading zero) goes as its GTIN-14.
      if (field) body[field] = field === 'gtin' ? asGtin14(value) : value;
      else if (name) metadata[name] = value;
    });
    if (Object.keys(metadata).length > 0) body.metadata = metadata;
    const missing = ['gtin', 'serialNumber'].filter((field) => !body[field]);
    if (missing.length > 0) problems.push({ line, message: `${missing.join(' and ')} missing` });
    else rows.push({ line, body });
  }
  return { rows, problems };
}
