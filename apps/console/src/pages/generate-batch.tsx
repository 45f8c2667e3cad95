import { useEffect, useState } from 'preact/hooks';
import { type ApiError, api, asApiError } from '../api.ts';
import { batchByteBudget, batchItemLimit, chunkRows } from '../batch-chunks.ts';
import { describedBy, Field } from '../components/field.tsx';
import { TableScroll } from '../components/table-scroll.tsx';
import { batchFromCsv, csvLine, type ParsedBatch } from '../csv.ts';
import { isCodeOfRow, itemOf } from '../existing-code.ts';
import { formatCount } from '../format.ts';
import { answerLost } from '../retry.ts';
import { Link } from '../router.tsx';
import type { BatchItemResult, CodeSummary, DataPage } from '../types.ts';

interface RowOutcome {
  line: number;
  body: Record<string, unknown>;
  url?: string;
  assetId?: string;
  /** The code was made before, by an earlier upload of the row (refused now as DUPLICATE_SERIAL). */
  existing?: boolean;
  error?: string;
}

/** Lookups of an earlier upload's codes that failed: how many, and the first one's error. */
interface LookupFailures {
  count: number;
  first?: ApiError;
}

/** DUPLICATE_SERIAL rows looked up at once. */
const lookupsAtOnce = 8;

/**
 * Lists each row refused as DUPLICATE_SERIAL with the code an earlier upload made of it, when one
 * of the account's codes is that very item (existing-code.ts). A lookup that fails leaves the row
 * failed and is counted in `failures`, with the first failure's words.
 */
async function takeExistingCodes(refused: RowOutcome[], failures: LookupFailures): Promise<void> {
  for (let start = 0; start < refused.length; start += lookupsAtOnce) {
    await Promise.all(
      refused.slice(start, start + lookupsAtOnce).map(async (row) => {
        try {
          const page = await api.get<DataPage<CodeSummary>>('/codes', {
            gtin: String(row.body.gtin),
            serial: String(row.body.serialNumber),
            limit: 10,
          });
          const own = page.data.find((code) => isCodeOfRow(code, row.body));
          if (own) Object.assign(row, { url: own.url, assetId: own.assetId, existing: true, error: undefined });
        } catch (caught) {
          // Left as the API refused it: DUPLICATE_SERIAL.
          failures.count += 1;
          failures.first ??= asApiError(caught);
        }
      }),
    );
  }
}

const exampleCsv = 'gtin,serial,batch,expiry,name\r\n09506000134352,SN-0001,LOT-1,2031-12-31,Fountain pen\r\n';

const resultHeader = ['line', 'gtin', 'serial', 'batch', 'expiry', 'status', 'url', 'assetId', 'error'];

function resultCsv(outcomes: RowOutcome[]): string {
  const lines = [csvLine(resultHeader)];
  for (const outcome of [...outcomes].sort((a, b) => a.line - b.line)) {
    lines.push(
      csvLine([
        outcome.line,
        outcome.body.gtin as string,
        outcome.body.serialNumber as string,
        outcome.body.batchNumber as string,
        outcome.body.expiryDate as string,
        outcome.existing ? 'existing' : outcome.url ? 'created' : 'failed',
        outcome.url,
        outcome.assetId,
        outcome.error,
      ]),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * Codes from a CSV upload: the rows sent in requests of at most the API's batch limit (each with an
 * Idempotency-Key, so a retry makes no second code), a progress bar across the requests, every
 * row's error by its line, and the results as a CSV to download (links included).
 */
export function GenerateBatchPage() {
  const [fileName, setFileName] = useState('');
  const [parsed, setParsed] = useState<ParsedBatch | undefined>();
  const [fileError, setFileError] = useState<string | undefined>();
  const [progress, setProgress] = useState<{ done: number; total: number; request: number; requests: number } | undefined>();
  const [outcomes, setOutcomes] = useState<RowOutcome[] | undefined>();
  const [failure, setFailure] = useState<{ error: ApiError; request: number; requests: number; rows: number } | undefined>();
  const [download, setDownload] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [uploadedBefore, setUploadedBefore] = useState(false);
  const [lookupFailures, setLookupFailures] = useState<LookupFailures | undefined>();

  useEffect(() => () => void (download && URL.revokeObjectURL(download)), [download]);

  const choose = async (event: { currentTarget: HTMLInputElement }) => {
    const file = event.currentTarget.files?.[0];
    setOutcomes(undefined);
    setFailure(undefined);
    setProgress(undefined);
    setDownload(undefined);
    if (!file) {
      setParsed(undefined);
      return;
    }
    setFileName(file.name);
    const batch = batchFromCsv(await file.text());
    setFileError(batch.fileError);
    setParsed(batch);
  };

  const run = async (event: Event) => {
    event.preventDefault();
    if (!parsed || parsed.fileError) {
      setFileError(parsed?.fileError ?? 'Choose a CSV file first.');
      return;
    }
    if (parsed.rows.length === 0) {
      setFileError('The file has no row with both a GTIN and a serial.');
      return;
    }
    setBusy(true);
    setFailure(undefined);
    const collected: RowOutcome[] = parsed.problems.map((problem) => ({ line: problem.line, body: {}, error: problem.message }));
    const { chunks, tooLarge } = chunkRows(parsed.rows);
    for (const row of tooLarge) {
      collected.push({
        line: row.line,
        body: row.body,
        error: `Not sent: the row is larger than a request may be (${formatCount(batchByteBudget)} bytes of JSON); a code’s metadata may be at most 16 KiB.`,
      });
    }
    const total = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    setProgress(chunks.length > 0 ? { done: 0, total, request: 0, requests: chunks.length } : undefined);
    let done = 0;
    let sent = 0;
    const sentItems = new Set<string>();
    const lookups: LookupFailures = { count: 0 };
    try {
      for (const chunk of chunks) {
        sent += 1;
        // One Idempotency-Key a request, kept across its retries (api.create): a request the API
        // carried out but whose answer was lost is answered again as it was, never carried out twice.
        const answer = await api.create<{ results: BatchItemResult[] }>(
          '/code/generate/batch',
          { items: chunk.map((row) => row.body) },
          { serverErrors: true },
        );
        const answered = new Map<number, RowOutcome>();
        const duplicated = new Set<number>();
        for (const result of answer.results) {
          const row = chunk[result.index];
          if (!row || answered.has(result.index)) continue;
          const outcome: RowOutcome =
            'code' in result
              ? { line: row.line, body: row.body, url: result.code.url, assetId: result.code.assetId }
              : { line: row.line, body: row.body, error: `${result.error.message} (${result.error.code})` };
          answered.set(result.index, outcome);
          collected.push(outcome);
          if (!('code' in result) && result.error.code === 'DUPLICATE_SERIAL') duplicated.add(result.index);
        }
        if (uploadedBefore) {
          // In the file's order: a row repeating an item sent earlier in this upload is a repeat,
          // not an earlier upload's code, and stays failed (two rows, one link: two labels of one code).
          const earlier: RowOutcome[] = [];
          chunk.forEach((row, index) => {
            const item = itemOf(row.body);
            const repeat = sentItems.has(item);
            sentItems.add(item);
            const outcome = answered.get(index);
            if (!repeat && outcome && duplicated.has(index)) earlier.push(outcome);
          });
          await takeExistingCodes(earlier, lookups);
        }
        // A row the answer left out is failed too, never silently missing.
        chunk.forEach((row, index) => {
          if (!answered.has(index))
            collected.push({ line: row.line, body: row.body, error: 'The API’s answer did not include this row.' });
        });
        done += chunk.length;
        setProgress({ done, total, request: sent, requests: chunks.length });
      }
    } catch (caught) {
      // The failed request's rows and every row not sent yet are listed as failed, with the API's message.
      const error = asApiError(caught);
      const failedChunk = chunks[sent - 1] ?? [];
      const because = `${error.message} (${error.code})`;
      // A refusal made nothing; a lost answer may have followed codes that were made.
      const failedRow = answerLost(error)
        ? `Unknown: its request got no answer after ${error.tries} tries, and its codes may have been made; look the serial up under Codes before sending the row again: ${because}`
        : `Not generated: its request failed: ${because}`;
      for (const row of failedChunk) collected.push({ line: row.line, body: row.body, error: failedRow });
      for (const chunk of chunks.slice(sent)) {
        for (const row of chunk)
          collected.push({ line: row.line, body: row.body, error: `Not sent: an earlier request failed: ${because}` });
      }
      setFailure({ error, request: sent, requests: chunks.length, rows: total - done });
    } finally {
      collected.sort((a, b) => a.line - b.line);
      setLookupFailures(lookups.count > 0 ? lookups : undefined);
      setOutcomes(collected);
      setDownload(URL.createObjectURL(new Blob([resultCsv(collected)], { type: 'text/csv' })));
      setBusy(false);
    }
  };

  const created = outcomes?.filter((outcome) => outcome.url && !outcome.existing).length ?? 0;
  const existing = outcomes?.filter((outcome) => outcome.existing).length ?? 0;
  const failed = outcomes?.filter((outcome) => outcome.error) ?? [];
  return (
    <>
      <p class="breadcrumb">
        <Link to="/codes">Codes</Link> › generate a batch
      </p>
      <h1>Generate a batch from CSV</h1>
      <p class="lead">
        The first line names the columns: <span class="code">gtin</span>, <span class="code">serial</span>, and optionally{' '}
        <span class="code">batch</span>, <span class="code">expiry</span> (YYYY-MM-DD); any other column (such as{' '}
        <span class="code">name</span>) becomes the code’s metadata. Rows are sent in requests of at most{' '}
        {formatCount(batchItemLimit)} rows and {formatCount(batchByteBudget / 1_000_000)} MB each.{' '}
        <a href={`data:text/csv;charset=utf-8,${encodeURIComponent(exampleCsv)}`} download="example-batch.csv">
          Download an example CSV
        </a>
        .
      </p>
      <form class="form" onSubmit={run} noValidate>
        <Field id="batch-file" label="CSV file" hint="A .csv file, UTF-8." error={fileError}>
          <input {...describedBy('batch-file', true, fileError)} type="file" accept=".csv,text/csv" onChange={choose} />
        </Field>
        {parsed && !parsed.fileError && (
          <p role="status">
            {fileName}: {formatCount(parsed.rows.length)} rows to generate
            {parsed.problems.length > 0 && `, ${formatCount(parsed.problems.length)} rows that cannot be sent (listed below)`}.
          </p>
        )}
        <label class="block-label">
          <input type="checkbox" checked={uploadedBefore} onChange={(event) => setUploadedBefore(event.currentTarget.checked)} />
          This file was sent before and did not finish (a tab closed, a connection lost): list the rows made then with their
          links, as existing, instead of failing them as duplicate serials
        </label>
        <button type="submit" class="button" disabled={busy || !parsed}>
          {busy ? 'Generating…' : 'Generate codes'}
        </button>
      </form>
      {progress && (
        <div class="progress">
          <label for="batch-progress">
            {formatCount(progress.done)} of {formatCount(progress.total)} rows answered ({formatCount(progress.request)} of{' '}
            {formatCount(progress.requests)} requests)
          </label>
          <progress id="batch-progress" max={progress.total} value={progress.done}>
            {progress.done} of {progress.total}
          </progress>
        </div>
      )}
      {failure && (
        <div class="state state-error" role="alert">
          <p>
            <strong>
              Request {formatCount(failure.request)} of {formatCount(failure.requests)} failed:
            </strong>{' '}
            {failure.error.message} <span class="code">({failure.error.code})</span>.{' '}
            {answerLost(failure.error)
              ? `It got no answer after ${formatCount(failure.error.tries)} tries: its rows may have been generated (look them up under Codes before sending them again), and the rows of the requests after it were not sent.`
              : 'Its rows and those of the requests after it were not generated.'}{' '}
            All {formatCount(failure.rows)} of these rows are listed below as failed, with this message, and in the download. The
            rows of the requests before it were answered.
          </p>
        </div>
      )}
      {outcomes && (
        <section aria-labelledby="batch-results-heading" class="panel">
          <h2 id="batch-results-heading">Results</h2>
          <p role="status">
            {formatCount(created)} codes created
            {existing > 0 &&
              `, ${formatCount(existing)} made before (an earlier upload of the same rows: listed as existing, with their links)`}
            , {formatCount(failed.length)} rows failed.
          </p>
          {lookupFailures && (
            <p class="state state-error">
              {formatCount(lookupFailures.count)} duplicate rows could not be looked up, so they are listed as failed
              {lookupFailures.first && (
                <>
                  : {lookupFailures.first.message} <span class="code">({lookupFailures.first.code})</span>
                </>
              )}
              .
            </p>
          )}
          {download && (
            <p>
              <a class="button secondary" href={download} download={`${fileName.replace(/\.csv$/i, '') || 'batch'}-results.csv`}>
                Download results (CSV with links)
              </a>
            </p>
          )}
          {failed.length > 0 && (
            <TableScroll labelledBy="batch-errors-caption">
              <table class="batch-errors">
                <caption id="batch-errors-caption">Rows that failed</caption>
                <thead>
                  <tr>
                    <th scope="col">Line</th>
                    <th scope="col">Serial</th>
                    <th scope="col">Error</th>
                  </tr>
                </thead>
                <tbody>
                  {failed.map((outcome) => (
                    <tr key={outcome.line}>
                      <th scope="row">{outcome.line}</th>
                      <td class="code">{(outcome.body.serialNumber as string | undefined) ?? '—'}</td>
                      <td>{outcome.error}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )}
        </section>
      )}
    </>
  );
}
