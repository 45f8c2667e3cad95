// CSV as the CLI writes it (RFC 4180); it reads files with parseCsv of @hallmark/contracts.
import { spreadsheetSafe } from '@hallmark/contracts';

/**
 * One field, quoted when it holds a comma, a quote or a line break. Text that a spreadsheet would
 * run as a formula (starting with =, +, -, @, a tab or a carriage return: a serial or lot such as
 * `=HYPERLINK(…)` is valid GS1 text and signed as it is) gets a leading `'`, and so does each part
 * after a `;` that starts so, as the API's scans CSV and the console's batch results do; numbers
 * stay as they are.
 */
export function csvField(value: string | number | null | undefined): string {
  const raw = value === null || value === undefined ? '' : String(value);
  const text = typeof value === 'string' ? spreadsheetSafe(raw) : raw;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record, CRLF-terminated as RFC 4180 says. */
export const csvLine = (values: ReadonlyArray<string | number | null | undefined>) => `${values.map(csvField).join(',')}\r\n`;
