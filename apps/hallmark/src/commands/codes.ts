import { type FileHandle, open, readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import {
  type BatchItemResult,
  type CodeListItem,
  type CsvRecord,
  CsvSyntaxError,
  GenerateBatchBody,
  type GenerateCodeBody,
  type GeneratedCode,
  parseCsv,
} from '@hallmark/contracts';
import { asGtin14 } from '@hallmark/gs1';
import { canonicalJson } from '@hallmark/provenance';
import { csvLine } from '../csv.ts';
import { createProgress } from '../progress.ts';
import type { CommandIo } from './command-io.ts';
import { connectProduct } from './product-api.ts';
import { sdkErrorLine } from './sdk-error-line.ts';
import { UsageError } from './usage-error.ts';

/** The API's own limit of items per POST /code/generate/batch (packages/contracts). */
export const batchLimit = GenerateBatchBody.properties.items.maxItems ?? 10_000;

/** --resume: how many DUPLICATE_SERIAL rows are looked up at once. */
const lookupsAtOnce = 8;

/** Row errors printed on stderr before the rest are left to the results file. */
const printedFailures = 20;

type Field = Exclude<keyof GenerateCodeBody, 'metadata'>;

/** Header names (lower case, without spaces, `_` and `-`) and the request field each one fills. */
const columnFields: Record<string, Field> = {
  gtin: 'gtin',
  serialnumber: 'serialNumber',
  serial: 'serialNumber',
  batchnumber: 'batchNumber',
  batch: 'batchNumber',
  lot: 'batchNumber',
  expirydate: 'expiryDate',
  expiry: 'expiryDate',
  schemaid: 'schemaId',
  schemaversion: 'schemaVersion',
};

/** What a header cell fills: a request field, or `metadata.<name>`. */
type Column = { field: Field } | { metadata: string };

function columnsOf(header: readonly string[]): Column[] {
  const columns = header.map((name): Column => {
    const trimmed = name.trim();
    if (/^metadata\./i.test(trimmed) && trimmed.length > 'metadata.'.length)
      return { metadata: trimmed.slice('metadata.'.length) };
    const field = columnFields[trimmed.toLowerCase().replace(/[\s_-]/g, '')];
    if (!field) {
      throw new UsageError(
        `the CSV's column "${trimmed}" is not known: use gtin, serialNumber, batchNumber, expiryDate, schemaId, schemaVersion or metadata.<name>`,
      );
    }
    return { field };
  });
  const fields = columns.flatMap((column) => ('field' in column ? [column.field] : []));
  for (const required of ['gtin', 'serialNumber'] as const) {
    if (!fields.includes(required)) throw new UsageError(`the CSV's header needs a ${required} column`);
  }
  const repeated = fields.find((field, index) => fields.indexOf(field) !== index);
  if (repeated) throw new UsageError(`the CSV's header has two ${repeated} columns`);
  return columns;
}

interface RowFailure {
  code: string;
  message: string;
}

/**
 * A batch item's refusal as a row's: its code, and its message with what each field's check said
 * (`Invalid request: check expiryDate.` alone did not say the date must be YYYY-MM-DD).
 */
function rowFailureOf(error: { code: string; message: string; details?: unknown }): RowFailure {
  const fields = (error.details as { fields?: unknown } | undefined)?.fields;
  const said = Array.isArray(fields)
    ? fields
        .filter(
          (entry): entry is { field: string; message: string } =>
            typeof entry?.field === 'string' && typeof entry?.message === 'string',
        )
        .map((entry) => `${entry.field} ${entry.message}`)
    : [];
  return { ...error, message: said.length > 0 ? `${error.message.replace(/\.$/, '')}: ${said.join('; ')}` : error.message };
}

/** One data row on its way: its request body, then what became of it. */
interface Row {
  /** 1-based, counting data rows only (the header is not a row). */
  row: number;
  line: number;
  body: GenerateCodeBody | undefined;
  /** `existing`: with --resume, the code an earlier run made of this very row (refused now as DUPLICATE_SERIAL). */
  outcome: { code: GeneratedCode } | { existing: CodeListItem } | { error: RowFailure } | undefined;
}

/** A row's item, as the API's uniqueness sees it: the GTIN and the serial. */
const itemOf = (body: GenerateCodeBody) => `${body.gtin}\u0000${body.serialNumber}`;

/**
 * Whether `code` is what `body` asks for: the same GTIN, serial, batch, expiry and metadata. Only
 * then is a code refused as DUPLICATE_SERIAL the row's own, made by an earlier run (--resume); a
 * serial reused for another item stays a failure.
 */
export function isCodeOfRow(code: CodeListItem, body: GenerateCodeBody): boolean {
  return (
    code.gtin === body.gtin &&
    code.serialNumber === body.serialNumber &&
    code.batchNumber === (body.batchNumber ?? null) &&
    code.expiryDate === (body.expiryDate ?? null) &&
    canonicalJson(code.metadata) === canonicalJson(body.metadata ?? {})
  );
}

/** A request body from a record; a failure when the row cannot become one (wrong field count, bad schemaVersion). */
function bodyOf(record: CsvRecord, columns: readonly Column[]): GenerateCodeBody | RowFailure {
  if (record.fields.length !== columns.length) {
    return {
      code: 'VALIDATION_ERROR',
      message: `the row has ${record.fields.length} field${record.fields.length === 1 ? '' : 's'}, the header ${columns.length}`,
    };
  }
  const body: Record<string, unknown> = {};
  const metadata: Record<string, string> = {};
  for (const [index, column] of columns.entries()) {
    const value = (record.fields[index] ?? '').trim();
    if (value === '') continue; // an empty cell leaves the field out
    if ('metadata' in column) metadata[column.metadata] = value;
    else if (column.field === 'schemaVersion') {
      if (!/^\d{1,10}$/.test(value))
        return { code: 'VALIDATION_ERROR', message: `schemaVersion "${value}" is not a whole number` };
      body.schemaVersion = Number(value);
    } else if (column.field === 'gtin') body.gtin = asGtin14(value);
    else body[column.field] = value;
  }
  if (Object.keys(metadata).length > 0) body.metadata = metadata;
  return body as GenerateCodeBody;
}

const resultColumns = [
  'row',
  'line',
  'status',
  'gtin',
  'serialNumber',
  'batchNumber',
  'expiryDate',
  'url',
  'assetId',
  'keyId',
  'createdAt',
  'errorCode',
  'errorMessage',
] as const;

function resultLine(row: Row): string {
  const outcome = row.outcome;
  const code = outcome && 'code' in outcome ? outcome.code : undefined;
  const existing = outcome && 'existing' in outcome ? outcome.existing : undefined;
  const error = outcome && 'error' in outcome ? outcome.error : undefined;
  return csvLine([
    row.row,
    row.line,
    code ? 'ok' : existing ? 'existing' : 'failed',
    code?.gtin ?? existing?.gtin ?? row.body?.gtin,
    code?.serial ?? existing?.serialNumber ?? row.body?.serialNumber,
    code?.batch ?? existing?.batchNumber ?? row.body?.batchNumber,
    code?.expiryDate ?? existing?.expiryDate ?? row.body?.expiryDate,
    code?.url ?? existing?.url,
    code?.assetId ?? existing?.assetId,
    code?.keyId,
    code?.createdAt ?? existing?.createdAt,
    error?.code,
    error?.message,
  ]);
}

/** `--batch-size`: 1 to the API's limit. */
function batchSizeOf(value: string | undefined): number {
  if (value === undefined) return batchLimit;
  const size = Number(value);
  if (!Number.isInteger(size) || size < 1 || size > batchLimit) {
    throw new UsageError(`--batch-size must be a whole number from 1 to ${batchLimit} (the API's limit per request)`);
  }
  return size;
}

async function readCsv(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** Every record of the text; a CsvSyntaxError becomes a UsageError naming the line. */
function* recordsOf(text: string, path: string): Generator<CsvRecord> {
  try {
    yield* parseCsv(text);
  } catch (error) {
    if (error instanceof CsvSyntaxError) throw new UsageError(`${path}: ${error.message}`);
    throw error;
  }
}

/**
 * `hallmark codes generate --csv <file> [--out <file>]`: one code per data row, through
 * POST /code/generate/batch in requests of up to the API's limit (each with an Idempotency-Key the
 * SDK keeps across its retries). Resolves with the exit code: 1 when any row failed.
 */
export async function codesCommand(args: string[], env: NodeJS.ProcessEnv, io: CommandIo): Promise<number> {
  const [action, ...rest] = args;
  if (action !== 'generate') throw new UsageError(`unknown codes action "${action ?? ''}" (codes generate)`);
  const { values } = parseArgs({
    args: rest,
    options: {
      csv: { type: 'string' },
      out: { type: 'string' },
      'batch-size': { type: 'string' },
      resume: { type: 'boolean' },
      json: { type: 'boolean' },
      url: { type: 'string' },
      key: { type: 'string' },
    },
  });
  if (!values.csv) throw new UsageError('--csv <file> is required');
  const batchSize = batchSizeOf(values['batch-size']);
  const text = await readCsv(values.csv);
  const records = recordsOf(text, values.csv);
  const header = records.next();
  if (header.done) throw new UsageError(`${values.csv} is empty: it needs a header and a row per code`);
  const columns = columnsOf(header.value.fields);
  let total = 0;
  for (const _ of recordsOf(text, values.csv)) total++;
  total -= 1; // the header
  if (total === 0) throw new UsageError(`${values.csv} has a header and no rows`);

  const api = await connectProduct(values, env, 'tenant');
  const file: FileHandle | undefined = values.out ? await open(values.out, 'w') : undefined;
  const asJsonLines = values.json === true && file === undefined;
  const write = async (chunk: string) => (file ? void (await file.write(chunk)) : io.out(chunk));
  const progress = createProgress({ label: 'generating', unit: 'rows', total, stream: io.terminal });
  const failures: Array<{ row: number; line: number } & RowFailure> = [];
  let generated = 0;
  let existed = 0;
  let lookupFailures = 0;
  /** --resume: the items (GTIN, serial) sent so far in this run. */
  const sentItems = new Set<string>();
  let duplicates = 0;
  let requests = 0;
  let done = 0;
  let window: Row[] = [];

  /** The row's line of the results, after counting it (and printing it when it failed). */
  const resultOf = (row: Row): string => {
    const outcome = row.outcome;
    if (outcome && 'error' in outcome) {
      failures.push({ row: row.row, line: row.line, ...outcome.error });
      if (outcome.error.code === 'DUPLICATE_SERIAL') duplicates++;
      if (failures.length <= printedFailures) {
        io.err(`hallmark: row ${row.row} (line ${row.line}): ${outcome.error.code}: ${outcome.error.message}\n`);
      }
    } else if (outcome && 'existing' in outcome) existed++;
    else generated++;
    return asJsonLines ? `${JSON.stringify({ row: row.row, line: row.line, ...outcome })}\n` : resultLine(row);
  };

  /**
   * --resume: each sent row refused as DUPLICATE_SERIAL, looked up (a few at a time), takes the code
   * an earlier run made of it (isCodeOfRow). A row repeating an item sent earlier in this run is a
   * repeat, not an earlier run's code: it stays refused (two rows with one link would be two labels
   * of one code). A lookup that fails leaves its row refused, said once, and the run goes on.
   */
  const takeExistingCodes = async (sent: Row[]) => {
    const duplicated = sent.filter((row) => {
      const item = row.body ? itemOf(row.body) : '';
      const repeat = sentItems.has(item);
      sentItems.add(item);
      return !repeat && row.outcome && 'error' in row.outcome && row.outcome.error.code === 'DUPLICATE_SERIAL';
    });
    const lookUp = async (row: Row) => {
      const body = row.body as GenerateCodeBody;
      try {
        const found = await api.client.codes.list({ gtin: body.gtin, serial: body.serialNumber, limit: 10 });
        const own = found.data.find((code) => isCodeOfRow(code, body));
        if (own) row.outcome = { existing: own };
      } catch (error) {
        lookupFailures++;
        if (lookupFailures > 1) return;
        const why = sdkErrorLine(error) ?? (error as Error).message;
        io.err(`hallmark: --resume could not look a duplicate row up: ${why}; such rows stay DUPLICATE_SERIAL\n`);
      }
    };
    for (let start = 0; start < duplicated.length; start += lookupsAtOnce) {
      await Promise.all(duplicated.slice(start, start + lookupsAtOnce).map(lookUp));
    }
  };

  /** Sends the window's good rows as one request and writes every row of the window, in order. */
  const flush = async () => {
    const sent = window.filter((row) => row.body !== undefined);
    if (sent.length > 0) {
      const { results } = await api.client.codes.generateBatch(
        { items: sent.map((row) => row.body) },
        { timeout: 300_000 }, // 10,000 codes take a few seconds; a loaded server, longer
      );
      requests++;
      for (const result of results as BatchItemResult[]) {
        const row = sent[result.index];
        if (row) row.outcome = 'code' in result ? { code: result.code } : { error: rowFailureOf(result.error) };
      }
      if (values.resume) await takeExistingCodes(sent);
    }
    let lines = done === 0 && !asJsonLines ? csvLine(resultColumns) : '';
    for (const row of window) {
      row.outcome ??= { error: { code: 'INTERNAL_ERROR', message: 'the API answered nothing for this row' } };
      lines += resultOf(row);
    }
    await write(lines);
    done += window.length;
    progress.advance(window.length);
    window = [];
  };

  try {
    let rowNumber = 0;
    let pending = 0;
    for (const csvRecord of records) {
      rowNumber++;
      const body = bodyOf(csvRecord, columns);
      const failed = 'message' in body;
      window.push({
        row: rowNumber,
        line: csvRecord.line,
        body: failed ? undefined : body,
        outcome: failed ? { error: body } : undefined,
      });
      if (!failed) pending++;
      if (pending === batchSize) {
        await flush();
        pending = 0;
      }
    }
    await flush();
  } catch (error) {
    progress.finish();
    if (done > 0) {
      io.err(`hallmark: stopped after ${done} of ${total} rows${file ? ` (their results are in ${values.out})` : ''}:\n`);
    }
    throw error;
  } finally {
    progress.finish();
    await file?.close();
  }

  if (failures.length > printedFailures) {
    io.err(`hallmark: … and ${failures.length - printedFailures} more failed rows${file ? ` (see ${values.out})` : ''}\n`);
  }
  if (duplicates > 0 && !values.resume) {
    io.err(
      `hallmark: ${duplicates} row${duplicates === 1 ? ' was' : 's were'} refused as DUPLICATE_SERIAL; if an earlier run ` +
        'made them (say it was stopped), run again with --resume to list their codes as "existing"\n',
    );
  }
  const summary = {
    rows: total,
    generated,
    ...(values.resume ? { existing: existed, lookupFailures } : {}),
    failed: failures.length,
    requests,
    ...(values.out ? { out: values.out } : {}),
  };
  if (values.json && file) io.out(`${JSON.stringify({ ...summary, failures })}\n`);
  else {
    const line =
      `generated ${generated} code${generated === 1 ? '' : 's'} from ${total} row${total === 1 ? '' : 's'} ` +
      `in ${requests} request${requests === 1 ? '' : 's'}` +
      `${existed > 0 ? `; ${existed} already existed` : ''}` +
      `${lookupFailures > 0 ? `; ${lookupFailures} duplicate row${lookupFailures === 1 ? '' : 's'} could not be looked up` : ''}` +
      `${failures.length > 0 ? `; ${failures.length} row${failures.length === 1 ? '' : 's'} failed` : ''}` +
      `${values.out ? `; results in ${values.out}` : ''}\n`;
    // With the results on stdout, the summary goes beside the row errors, so a pipe gets only CSV.
    if (file) io.out(line);
    else io.err(line);
  }
  return failures.length > 0 ? 1 : 0;
}
