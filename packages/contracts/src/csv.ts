// CSV as every part of the product reads and writes it, on its own (`@hallmark/contracts/csv`) for
// the console, which bundles it without the rest of the contracts.
export { type CsvRecord, CsvSyntaxError, parseCsv } from './csv-records.ts';
export { spreadsheetSafe } from './spreadsheet-text.ts';
