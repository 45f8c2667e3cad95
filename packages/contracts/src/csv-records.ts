/**
 * CSV as RFC 4180 writes it (quoted fields with "" for a quote, commas and line breaks inside
 * quotes, CRLF or LF), read with the line each record starts on, so a bad row can be named by
 * the line an editor shows: the API's bulk blocklist (POST /blocklist/bulk) and the CLI's files.
 */
export interface CsvRecord {
  fields: string[];
  /** The 1-based line of the file where the record starts. */
  line: number;
}

/** The file cannot be read as CSV at all (a quote never closed); `line` is where it went wrong. */
export class CsvSyntaxError extends Error {
  override readonly name = 'CsvSyntaxError';
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

/**
 * Every record of `text`, in order. Blank lines, and rows of empty cells only, are skipped. Throws CsvSyntaxError for a quoted
 * field that never closes or text right after a closing quote.
 */
export function* parseCsv(text: string): Generator<CsvRecord> {
  let position = text.charCodeAt(0) === 0xfeff ? 1 : 0; // a byte-order mark, as spreadsheets write
  let line = 1;
  while (position < text.length) {
    const startLine = line;
    const fields: string[] = [];
    let field = '';
    let endOfRecord = false;
    while (!endOfRecord) {
      if (text[position] === '"') {
        // A quoted field: up to the quote not doubled.
        position++;
        for (;;) {
          const quote = text.indexOf('"', position);
          if (quote < 0) throw new CsvSyntaxError(`a quoted field opened on line ${startLine} never closes`, startLine);
          const chunk = text.slice(position, quote);
          line += countLineBreaks(chunk);
          field += chunk;
          position = quote + 1;
          if (text[position] === '"') {
            field += '"';
            position++;
          } else break;
        }
        const next = text[position];
        if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') {
          throw new CsvSyntaxError(`line ${line}: text after a closing quote (a quote inside a field is written "")`, line);
        }
      } else {
        let end = position;
        while (end < text.length && text[end] !== ',' && text[end] !== '\n' && text[end] !== '\r') end++;
        field += text.slice(position, end);
        position = end;
      }
      const separator = text[position];
      fields.push(field);
      field = '';
      if (separator === ',') {
        position++;
        continue;
      }
      // End of line or of the text.
      if (separator === '\r') position++;
      if (text[position] === '\n') position++;
      if (separator !== undefined) line++;
      endOfRecord = true;
    }
    // A blank line, or a spreadsheet's empty row (`,,,`: its cells, no values).
    if (fields.every((field) => field === '')) continue;
    yield { fields, line: startLine };
  }
}

function countLineBreaks(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === '\n' || (char === '\r' && text[index + 1] !== '\n')) count++;
  }
  return count;
}
