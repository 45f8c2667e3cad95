import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseCsv } from '@hallmark/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

/**
 * The results file `hallmark codes generate --out` writes (found by a review of exports, 2026-12-04).
 * The scans CSV (services/gateway/src/routes/scans.ts csvCell) and the console's batch results
 * (apps/console/src/csv.ts csvLine) prefix `'` to a cell that a spreadsheet would run as a formula
 * (= + - @, tab, CR; docs/API.md "Formula injection", docs/CONSOLE.md); the CLI's results file of the
 * very same rows did not, and now does (apps/hallmark/src/csv.ts csvField).
 */

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../../apps/hallmark/bin/hallmark.js', import.meta.url));
const gtin = '09506000134352';
const formulaLead = /^[=+\-@\t\r]/;

let t: TestProduct;
let brand: string;

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_LOG_LEVEL: 'warn' });
  const operator = t.product.generatedOperatorKey as string;
  const created = await call<{ account: { id: string }; apiKey: { secret: string } }>(t.url, 'POST', '/api/v1/accounts', {
    key: operator,
    body: { name: 'Export brand', tier: 'enterprise' },
  });
  expect(created.status).toBe(201);
  brand = created.body.apiKey.secret;
  const grant = await call(t.url, 'POST', `/api/v1/accounts/${created.body.account.id}/gtins`, { key: operator, body: { gtin } });
  expect(grant.status, JSON.stringify(grant.body)).toBe(201);
});

afterAll(async () => {
  await t?.stop();
});

describe('hallmark codes generate: the results CSV', () => {
  it('writes no cell a spreadsheet would run as a formula, as the console and the scans CSV do not', async () => {
    // Valid GS1 AI 82 values (the API signs them): a serial and a lot that start like formulas, as a
    // supplier's serial list may carry them.
    const serial = '=HYPER("x",1)';
    const batch = '-2+3';
    const input = join(t.dataDir, 'formula-rows.csv');
    const out = join(t.dataDir, 'formula-results.csv');
    await writeFile(input, `gtin,serialNumber,batchNumber\n${gtin},"=HYPER(""x"",1)",${batch}\n`);
    const outcome = await run(process.execPath, [bin, 'codes', 'generate', '--csv', input, '--out', out, '--url', t.url], {
      cwd: t.dataDir,
      env: { PATH: process.env.PATH ?? '', HALLMARK_API_KEY: brand },
    });
    expect(outcome.stdout).toMatch(/generated 1 code/);

    const [header, ...rows] = [...parseCsv(await readFile(out, 'utf8'))].map((record) => record.fields);
    const column = (name: string) => (header as string[]).indexOf(name);
    expect(rows).toHaveLength(1);
    const row = rows[0] as string[];
    expect(row[column('status')]).toBe('ok');
    // The values are still there (after the quote a spreadsheet shows as text)…
    expect(row[column('serialNumber')]?.endsWith(serial)).toBe(true);
    expect(row[column('batchNumber')]?.endsWith(batch)).toBe(true);
    // …but no cell starts like a formula.
    const formulas = row.filter((cell) => formulaLead.test(cell));
    expect(formulas).toEqual([]);
  });
});
