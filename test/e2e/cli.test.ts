import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseCsv } from '@hallmark/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { hallmarkBin as bin, type CliOutcome as Outcome, runHallmark } from '../support/hallmark-cli.ts';

// The `hallmark` binary as a child process (stdout and stderr are pipes, not a terminal) against a
// started embedded product, found as a user's shell finds it: through HALLMARK_DATA_DIR's lock, or --url.

const gtin = '09506000134352';

let t: TestProduct;
let operatorKey: string;
let tenantKey: string;
let accountId: string;

const hallmark = (env: Record<string, string>, ...args: string[]): Promise<Outcome> => runHallmark(t.dataDir, env, args);

/** `hallmark codes generate --csv <csv> --out <out> [flags]` with `key` as HALLMARK_API_KEY. */
const generateCodes = (key: string, csv: string, out: string, ...flags: string[]) =>
  hallmark({ HALLMARK_API_KEY: key }, 'codes', 'generate', '--csv', csv, '--out', out, ...flags);

/** No progress bar, no carriage return or terminal escape: stderr is a pipe here. */
function expectNoProgress(outcome: Outcome) {
  expect(outcome.stderr).not.toContain('\r');
  expect(outcome.stderr).not.toContain('\u001b[');
  expect(outcome.stderr).not.toMatch(/generating|exporting|replaying/);
}

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_LOG_LEVEL: 'warn' });
  operatorKey = t.product.generatedOperatorKey as string;
  const created = await call<{ account: { id: string }; apiKey: { secret: string } }>(t.url, 'POST', '/api/v1/accounts', {
    key: operatorKey,
    body: { name: 'CLI tenant', tier: 'enterprise' },
  });
  expect(created.status).toBe(201);
  tenantKey = created.body.apiKey.secret;
  accountId = created.body.account.id;
  // The grant through the CLI, over the running server's API (the operator key from <data dir>/operator-key).
  const granted = await hallmark({}, 'gtins', 'grant', '--account', created.body.account.id, '--gtin', gtin);
  expect(granted.code, granted.stderr).toBe(0);
});

afterAll(async () => {
  await t?.stop();
});

describe('hallmark against a running product', () => {
  it('codes generate: a CSV with bad rows, in several requests; row errors by row and line, exit 1, the good rows with their links', async () => {
    const csv = join(t.dataDir, 'codes.csv');
    const out = join(t.dataDir, 'results.csv');
    await writeFile(
      csv,
      [
        'gtin,serialNumber,batchNumber,metadata.name',
        `${gtin},CLI-1,L1,Watch`,
        '09506000134353,CLI-2,L1,wrong check digit',
        `${gtin},CLI-3`,
        `${gtin},"CLI,4",L2,"quoted, name"`,
        '',
        // The GTIN as a spreadsheet leaves it, without its leading zero: sent as the GTIN-14.
        `${gtin.slice(1)},CLI-5,L2,"two`,
        `lines"`,
      ].join('\n'),
    );
    const outcome = await generateCodes(tenantKey, csv, out, '--batch-size', '2');
    expect(outcome.code).toBe(1);
    expect(outcome.stderr.split('\n')).toEqual([
      expect.stringMatching(/^hallmark: row 2 \(line 3\): INVALID_GTIN: /),
      'hallmark: row 3 (line 4): VALIDATION_ERROR: the row has 2 fields, the header 4',
      '',
    ]);
    expectNoProgress(outcome);
    // 3 good rows in requests of 2: two requests.
    expect(outcome.stdout).toBe(`generated 3 codes from 5 rows in 2 requests; 2 rows failed; results in ${out}\n`);

    const [header, ...rows] = [...parseCsv(await readFile(out, 'utf8'))].map((record) => record.fields);
    expect(header?.slice(0, 3)).toEqual(['row', 'line', 'status']);
    const column = (name: string) => header?.indexOf(name) ?? -1;
    expect(
      rows.map((row) => [row[0], row[1], row[2], row[column('gtin')], row[column('serialNumber')], row[column('errorCode')]]),
    ).toEqual([
      ['1', '2', 'ok', gtin, 'CLI-1', ''],
      ['2', '3', 'failed', '09506000134353', 'CLI-2', 'INVALID_GTIN'],
      ['3', '4', 'failed', '', '', 'VALIDATION_ERROR'],
      ['4', '5', 'ok', gtin, 'CLI,4', ''],
      ['5', '7', 'ok', gtin, 'CLI-5', ''],
    ]);
    // Each good row's link verifies as the tenant's authentic code, with the row's metadata.
    const links = rows.filter((row) => row[2] === 'ok').map((row) => row[column('url')] as string);
    for (const url of links) {
      const verified = await call<{ verdict: string }>(t.url, 'POST', '/api/v1/code/verify', { key: tenantKey, body: { url } });
      expect(verified.body.verdict, url).toBe('AUTHENTIC');
    }
    expect(links[1]).toContain('/21/CLI%2C4/10/L2');
    // And through the CLI's own online verification (the SDK's codes.verify).
    const verified = await hallmark({ HALLMARK_API_KEY: tenantKey }, 'verify', links[0] as string);
    expect([verified.code, (JSON.parse(verified.stdout) as { verdict: string }).verdict]).toEqual([0, 'AUTHENTIC']);
  });

  it('codes generate killed mid-run, then run again with --resume: every row has its code, the ones made before listed as existing with their links', async () => {
    const csv = join(t.dataDir, 'resume.csv');
    const firstOut = join(t.dataDir, 'resume-first.csv');
    const rows = Array.from({ length: 300 }, (_, index) => `${gtin},RES-${index + 1},L1`);
    await writeFile(csv, ['gtin,serialNumber,batchNumber', ...rows].join('\n'));
    // One row a request, killed (SIGKILL: no handler runs) once its results file holds two rows.
    const first = spawn(process.execPath, [bin, 'codes', 'generate', '--csv', csv, '--out', firstOut, '--batch-size', '1'], {
      env: { PATH: process.env.PATH ?? '', HALLMARK_DATA_DIR: t.dataDir, HALLMARK_API_KEY: tenantKey },
      stdio: 'ignore',
    });
    const ended = new Promise((resolve) => first.once('exit', resolve));
    const written = async () => [...parseCsv(await readFile(firstOut, 'utf8').catch(() => ''))].slice(1);
    await expect.poll(async () => (await written()).length, { timeout: 30_000, interval: 20 }).toBeGreaterThanOrEqual(2);
    first.kill('SIGKILL');
    await ended;
    const madeBefore = new Map((await written()).map((record) => [record.fields[4], record.fields[7]])); // serial → url
    expect(madeBefore.size).toBeGreaterThanOrEqual(2);

    // With --resume, one serial now asked with another batch (another item) and one row repeated
    // within the file (a repeat, not an earlier run's code): both still refused.
    await writeFile(csv, ['gtin,serialNumber,batchNumber', ...rows, `${gtin},RES-1,L2`, `${gtin},RES-2,L1`].join('\n'));
    const out = join(t.dataDir, 'resume-results.csv');
    const resumed = await generateCodes(tenantKey, csv, out, '--resume');
    expect(resumed.code).toBe(1);
    const [header, ...results] = [...parseCsv(await readFile(out, 'utf8'))].map((record) => record.fields);
    const column = (name: string) => header?.indexOf(name) ?? -1;
    const statuses = results.map((row) => row[column('status')]);
    expect(statuses.slice(0, 300).every((status) => status === 'existing' || status === 'ok')).toBe(true);
    expect(statuses.slice(300)).toEqual(['failed', 'failed']);
    expect(results.slice(300).map((row) => row[column('errorCode')])).toEqual(['DUPLICATE_SERIAL', 'DUPLICATE_SERIAL']);
    // Every row the killed run made (or made as it died) is existing now; the existing ones carry the first run's links.
    const existing = results.filter((row) => row[column('status')] === 'existing');
    expect(existing.length).toBeGreaterThanOrEqual(madeBefore.size);
    for (const [serial, url] of madeBefore) {
      const row = results.find((result) => result[column('serialNumber')] === serial);
      expect([row?.[column('status')], row?.[column('url')]]).toEqual(['existing', url]);
    }
    expect(resumed.stdout).toBe(
      `generated ${300 - existing.length} codes from 302 rows in 1 request; ${existing.length} already existed; 2 rows failed; results in ${out}\n`,
    );
    // Each listed link is the tenant's authentic code.
    for (const row of [existing[0], results.find((result) => result[column('status')] === 'ok')]) {
      const verified = await call<{ verdict: string }>(t.url, 'POST', '/api/v1/code/verify', {
        key: tenantKey,
        body: { url: row?.[column('url')] },
      });
      expect(verified.body.verdict, JSON.stringify([row, verified.body])).toBe('AUTHENTIC');
    }

    // A key that may generate but not list codes: the lookups are refused, said once, and the run
    // still writes every row (the duplicates refused, the new one made).
    const writer = await call<{ secret: string }>(t.url, 'POST', '/api/v1/keys', {
      key: tenantKey,
      body: { name: 'CLI generate only', scopes: ['assets:create'] },
    });
    expect(writer.status).toBe(201);
    await writeFile(
      csv,
      ['gtin,serialNumber,batchNumber', `${gtin},RES-1,L1`, `${gtin},RES-2,L1`, `${gtin},RES-NEW-1,L1`].join('\n'),
    );
    const limited = await generateCodes(writer.body.secret, csv, out, '--resume');
    expect(limited.code).toBe(1);
    expect(limited.stderr.match(/--resume could not look a duplicate row up: .*INSUFFICIENT_SCOPE/g)).toHaveLength(1);
    const [, ...limitedRows] = [...parseCsv(await readFile(out, 'utf8'))].map((record) => record.fields);
    expect(limitedRows.map((row) => [row[column('status')], row[column('errorCode')]])).toEqual([
      ['failed', 'DUPLICATE_SERIAL'],
      ['failed', 'DUPLICATE_SERIAL'],
      ['ok', ''],
    ]);
  });

  it('--json: a parseable summary for scripts, and one JSON object a row on stdout without --out', async () => {
    const csv = join(t.dataDir, 'json.csv');
    await writeFile(csv, `gtin,serialNumber\n${gtin},JSON-1\n${gtin},JSON-1\n`);
    const summary = await hallmark(
      {},
      'codes',
      'generate',
      '--csv',
      csv,
      '--out',
      join(t.dataDir, 'json-results.csv'),
      '--json',
      '--url',
      t.url,
      '--key',
      tenantKey,
    );
    expect(summary.code).toBe(1);
    expect(JSON.parse(summary.stdout)).toEqual({
      rows: 2,
      generated: 1,
      failed: 1,
      requests: 1,
      out: join(t.dataDir, 'json-results.csv'),
      failures: [{ row: 2, line: 3, code: 'DUPLICATE_SERIAL', message: expect.any(String), details: expect.any(Object) }],
    });
    // A refused duplicate may be a code an earlier run made: the hint says how to list it.
    expect(summary.stderr).toContain('if an earlier run made them (say it was stopped), run again with --resume');

    await writeFile(csv, `gtin,serialNumber\n${gtin},JSON-2\n`);
    const lines = await hallmark({ HALLMARK_API_KEY: tenantKey }, 'codes', 'generate', '--csv', csv, '--json');
    expect(lines.code, lines.stderr).toBe(0);
    const [row] = lines.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(row).toMatchObject({ row: 1, line: 2, code: { gtin, serial: 'JSON-2', url: expect.stringContaining('/21/JSON-2') } });

    const accounts = await hallmark({}, 'accounts', 'list', '--json');
    expect(accounts.code, accounts.stderr).toBe(0);
    const listed = accounts.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { name: string });
    expect(listed.map((account) => account.name)).toContain('CLI tenant');
  });

  it('compliance export: streamed to a file that "hallmark audit" finds valid; an unknown asset is one line with the API’s code', async () => {
    const csv = join(t.dataDir, 'export.csv');
    await writeFile(csv, `gtin,serialNumber\n${gtin},EXPORT-1\n`);
    const generated = await hallmark({ HALLMARK_API_KEY: tenantKey }, 'codes', 'generate', '--csv', csv, '--json');
    const assetId = (JSON.parse(generated.stdout) as { code: { assetId: string } }).code.assetId;

    const file = join(t.dataDir, 'export.json');
    const exported = await hallmark({ HALLMARK_API_KEY: tenantKey }, 'compliance', 'export', assetId, '--out', file, '--json');
    expect(exported.code, exported.stderr).toBe(0);
    expectNoProgress(exported);
    const summary = JSON.parse(exported.stdout) as { assetId: string; treeSize: number; bytes: number; out: string };
    expect(summary).toMatchObject({ assetId, treeSize: 1, out: file });
    const document = JSON.parse(await readFile(file, 'utf8')) as { assetId: string; events: unknown[] };
    expect(summary.bytes).toBe(Buffer.byteLength(await readFile(file, 'utf8')));
    expect(document.assetId).toBe(assetId);
    expect(document.events).toHaveLength(1);

    const jwks = join(t.dataDir, 'jwks.json');
    await writeFile(jwks, JSON.stringify((await call(t.url, 'GET', '/.well-known/jwks.json')).body));
    const audited = await hallmark({}, 'audit', file, '--jwks', jwks);
    expect(audited.code, audited.stdout).toBe(0);

    const csvFile = join(t.dataDir, 'export.csv.out');
    const asCsv = await hallmark({}, 'compliance', 'export', assetId, '--out', csvFile, '--format', 'csv', '--key', tenantKey);
    expect(asCsv.code, asCsv.stderr).toBe(0);
    expect(asCsv.stdout).toMatch(/^exported code_\w+ \(tree size 1, \d+ bytes\) to /);
    expect((await readFile(csvFile, 'utf8')).split('\r\n')[0]).toMatch(/^record,leaf_index,event_id,/);

    const missing = await hallmark(
      { HALLMARK_API_KEY: tenantKey },
      'compliance',
      'export',
      'code_nope',
      '--out',
      join(t.dataDir, 'x.json'),
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^hallmark: the API answered 404 NOT_FOUND: [^\n]+ \(request [^)]+\)\n$/);
    await expect(readFile(join(t.dataDir, 'x.json.partial'))).rejects.toThrow();
  });

  it('a wrong command line: one line, a hint and exit code 2, nothing on stdout', async () => {
    expect(await hallmark({}, 'codes', 'generate', '--csv', 'x.csv', '--jsn')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'hallmark: unknown option --jsn (did you mean --json?)\nRun "hallmark codes --help" for its usage.\n',
    });
    expect(await hallmark({}, 'complaince', 'export')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'hallmark: unknown command "complaince" (did you mean "compliance"?)\nRun "hallmark --help" for usage.\n',
    });
    const noCsv = await hallmark({}, 'codes', 'generate', '--csv', join(t.dataDir, 'absent.csv'));
    expect([noCsv.code, noCsv.stderr.split('\n').length]).toEqual([2, 3]);
    // Found by a doc audit (2026-12-07): each of these is a bad value given to the command (2) or a
    // wrong setting (78), said before anything is asked of a server or a database.
    const badExpiry = await hallmark({}, 'keys', 'create', '--account', 'acc_x', '--name', 'n', '--expires-in', '90x');
    expect([badExpiry.code, badExpiry.stderr.split('\n')[0]]).toEqual([
      2,
      'hallmark: --expires-in must be a whole number followed by m, h, d, w or y (for example 90d)',
    ]);
    const noFolder = join(t.dataDir, 'no-such-folder', 'x.json');
    const badOut = await hallmark({ HALLMARK_API_KEY: tenantKey }, 'compliance', 'export', 'code_x', '--out', noFolder);
    expect([badOut.code, badOut.stderr.split('\n')[0]]).toEqual([
      2,
      `hallmark: --out ${noFolder}: cannot write ${noFolder}.partial (ENOENT)`,
    ]);
    const badUrl = await hallmark({ HALLMARK_DATABASE_URL: 'notaurl' }, 'gtins', 'conflicts');
    expect([badUrl.code, badUrl.stderr]).toEqual([
      78,
      'hallmark: HALLMARK_DATABASE_URL must be a PostgreSQL connection URL (postgres://… or postgresql://…)\n',
    ]);
  });

  it('lists GTIN claims as tab-separated lines, and names each field a refused row got wrong', async () => {
    const listed = await hallmark({}, 'gtins', 'list', '--account', accountId);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split('\t').slice(1, 5)).toEqual(['gtin', gtin, 'live', 'active']);
    const csv = join(t.dataDir, 'expiry.csv');
    await writeFile(csv, `gtin,serialNumber,expiry\n${gtin},EXPIRY-1,271231\n`);
    const outcome = await generateCodes(tenantKey, csv, join(t.dataDir, 'expiry-results.csv'));
    expect(outcome.code).toBe(1);
    expect(outcome.stderr.split('\n')[0]).toBe(
      'hallmark: row 1 (line 2): VALIDATION_ERROR: Invalid request: check expiryDate: expiryDate must be an ISO 8601 date (YYYY-MM-DD) or date-time, in 2076 at the latest',
    );
  });

  it('projections rebuild works on the database with the product stopped, and says it', async () => {
    await t.stopKeepingData();
    const rebuilt = await hallmark({}, 'projections', 'rebuild');
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.stdout).toMatch(/^Rebuilt the Merkle projection from \d+ events in \d+ ms\.\n$/);
    expectNoProgress(rebuilt);
    // With the product stopped, the commands that need it say so in one line.
    const noServer = await hallmark({}, 'compliance', 'export', 'code_x', '--out', join(t.dataDir, 'y.json'));
    expect(noServer.code).toBe(1);
    expect(noServer.stderr).toMatch(/^hallmark: no Hallmark server is running on .*--url.*\n$/);
    await rm(join(t.dataDir, 'y.json.partial'), { force: true });
  });
});
