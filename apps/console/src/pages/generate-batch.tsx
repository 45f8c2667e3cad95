import { useEffect, useState } from 'preact/hooks';
import { type ApiError, api } from '../api.ts';
import { describedBy, Field } from '../components/field.tsx';
import { TableScroll } from '../components/table-scroll.tsx';
import { type BatchRow, batchFromCsv, csvLine, type ParsedBatch } from '../csv.ts';
import { formatCount } from '../format.ts';
import { Link } from '../router.tsx';
import type { BatchItemResult } from '../types.ts';
import { asApiError } from '../use-load.ts';

/** Items the API takes in one POST /code/generate/batch (packages/contracts, GenerateBatchBody). */
export const batchLimit = 10_000;

interface RowOutcome {
  line: number;
  body: Record<string, unknown>;
  url?: string;
  assetId?: string;
  error?: string;
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
        outcome.url ? 'created' : 'failed',
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
  const [progress, setProgress] = useState<{ done: number; total: number } | undefined>();
  const [outcomes, setOutcomes] = useState<RowOutcome[] | undefined>();
  const [failure, setFailure] = useState<ApiError | undefined>();
  const [download, setDownload] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

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
    const chunks: BatchRow[][] = [];
    for (let start = 0; start < parsed.rows.length; start += batchLimit)
      chunks.push(parsed.rows.slice(start, start + batchLimit));
    setProgress({ done: 0, total: parsed.rows.length });
    let done = 0;
    try {
      for (const chunk of chunks) {
        const answer = await api.post<{ results: BatchItemResult[] }>(
          '/code/generate/batch',
          { items: chunk.map((row) => row.body) },
          { headers: { 'idempotency-key': crypto.randomUUID() } },
        );
        for (const result of answer.results) {
          const row = chunk[result.index];
          if (!row) continue;
          if ('code' in result)
            collected.push({ line: row.line, body: row.body, url: result.code.url, assetId: result.code.assetId });
          else collected.push({ line: row.line, body: row.body, error: `${result.error.message} (${result.error.code})` });
        }
        done += chunk.length;
        setProgress({ done, total: parsed.rows.length });
      }
    } catch (caught) {
      setFailure(asApiError(caught));
    } finally {
      collected.sort((a, b) => a.line - b.line);
      setOutcomes(collected);
      setDownload(URL.createObjectURL(new Blob([resultCsv(collected)], { type: 'text/csv' })));
      setBusy(false);
    }
  };

  const created = outcomes?.filter((outcome) => outcome.url).length ?? 0;
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
        <span class="code">name</span>) becomes the code’s metadata. Rows are sent {formatCount(batchLimit)} at a time.{' '}
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
        <button type="submit" class="button" disabled={busy || !parsed}>
          {busy ? 'Generating…' : 'Generate codes'}
        </button>
      </form>
      {progress && (
        <div class="progress">
          <label for="batch-progress">
            Generated {formatCount(progress.done)} of {formatCount(progress.total)} rows
          </label>
          <progress id="batch-progress" max={progress.total} value={progress.done}>
            {progress.done} of {progress.total}
          </progress>
        </div>
      )}
      {failure && (
        <div class="state state-error" role="alert">
          <p>
            <strong>A request failed:</strong> {failure.message} <span class="code">({failure.code})</span>. The rows before it
            were generated; the download lists them.
          </p>
        </div>
      )}
      {outcomes && (
        <section aria-labelledby="batch-results-heading" class="panel">
          <h2 id="batch-results-heading">Results</h2>
          <p role="status">
            {formatCount(created)} codes created, {formatCount(failed.length)} rows failed.
          </p>
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
