// The web console (apps/console, docs/CONSOLE.md) in real headless Chromium (Debian's, through
// playwright-core), against the embedded product over HTTP: sign-in with an API key, a key created,
// its secret shown once, used and revoked (and one made by keyboard alone); batches from a CSV with
// their results downloaded, over several requests and with one refused; the overview's counts after
// real verifications; the review of reports (confirm, dismiss, lift; a stranger's words shown as
// text); the environment switch; usage with and without keys:read; sign-out; a revoked
// key's session ending; axe-core on every page; screenshots of every page at phone and desktop size
// under test-artifacts/console/.
import { spawnSync } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earlyInWindow } from '../support/client-address.ts';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

const artifacts = join(process.cwd(), 'test-artifacts', 'console');
const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const viewports = {
  phone: { width: 390, height: 844 },
  desktop: { width: 1280, height: 800 },
} as const;
type Viewport = keyof typeof viewports;
const gtin = '09506000134352';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let browser: Browser;
let brand: string;
/** What the API answered for the verifications made before the overview is opened, by verdict. */
const verdictCounts = { AUTHENTIC: 0, SUSPICIOUS: 0, COUNTERFEIT: 0 };
let tamperedSerial = '';
let overScannedSerial = '';
let codeAssetId = '';
/** Messages the browser logged about refused content (the CSP): there must be none. */
const cspViolations: string[] = [];

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

/** The console's build, as the README's install makes it (the root postinstall); made here if missing. */
function ensureConsoleBuilt(): void {
  // Built again when a source is newer than the build: else the tests would drive an old console.
  const built = spawnSync(process.execPath, ['apps/console/scripts/build-console.mjs', '--if-stale'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('the console did not build');
}

async function verify(url: string): Promise<Json> {
  const answer = await api('POST', '/code/verify', { key: brand, body: { url } });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  verdictCounts[answer.body.verdict as keyof typeof verdictCounts] += 1;
  return answer.body;
}

async function generate(serialNumber: string): Promise<Json> {
  const answer = await api('POST', '/code/generate', {
    key: brand,
    body: { gtin, serialNumber, batchNumber: 'LOT-7', metadata: { name: 'Console test pen' } },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

beforeAll(async () => {
  ensureConsoleBuilt();
  await mkdir(artifacts, { recursive: true });
  t = await startTestProduct({
    HALLMARK_PUBLIC_RATE_LIMIT: '1000',
    // The webhooks page's test delivers to a receiver on loopback, quickly retried.
    HALLMARK_WEBHOOKS_ALLOW_PRIVATE: 'true',
    HALLMARK_WEBHOOK_RETRY_SCHEDULE_MS: '100,100,100',
    HALLMARK_WEBHOOK_TIMEOUT_MS: '1000',
    HALLMARK_WEBHOOK_POLL_MS: '50',
  });
  // Should the build have gone between the check above and the start (a build being remade beside
  // this test), it is made again: the gateway picks up a build made after it started.
  if ((await fetch(`${t.url}/console`)).status === 503) ensureConsoleBuilt();
  expect((await fetch(`${t.url}/console`)).status).toBe(200);
  const operator = t.product.generatedOperatorKey as string;
  const created = await api('POST', '/accounts', { key: operator, body: { name: 'Console Brand', tier: 'enterprise' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  brand = created.body.apiKey.secret;
  await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { gtin } });
  // Two scans an hour is too many, and a client's repeats count: the third scan is EXCESSIVE_SCANS.
  const config = await api('PATCH', '/compliance/config', {
    key: brand,
    body: { riskThresholds: { maxScansPerWindow: 2, repeatWindowSeconds: 0 } },
  });
  expect(config.status, JSON.stringify(config.body)).toBe(200);

  const authentic = await generate('PEN-A1');
  codeAssetId = authentic.assetId;
  expect((await verify(authentic.url)).verdict).toBe('AUTHENTIC');
  // A shopper's view of its public page: a scan the code's history says was not the brand's own.
  const shopperView = await fetch(`${t.url}/verify${new URL(authentic.url).pathname}${new URL(authentic.url).search}`, {
    headers: { accept: 'application/json' },
  });
  expect(shopperView.status).toBe(200);
  expect(((await shopperView.json()) as Json).verdict).toBe('AUTHENTIC');
  verdictCounts.AUTHENTIC += 1;
  // A report waiting in the brand's queue (it changes no verdict).
  const report = await api('POST', '/code/report', {
    key: brand,
    body: { url: authentic.url, reason: 'Seen at a market stall' },
  });
  expect(report.status, JSON.stringify(report.body)).toBe(201);
  const tampered = await generate('PEN-T1');
  tamperedSerial = 'PEN-T1';
  const forged = tampered.url.replace(/sig=(.)/, (_: string, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);
  expect((await verify(forged)).verdict).toBe('COUNTERFEIT');
  const overScanned = await generate('PEN-O1');
  overScannedSerial = 'PEN-O1';
  let last: Json = {};
  for (let scan = 0; scan < 25 && last.verdict !== 'SUSPICIOUS'; scan += 1) last = await verify(overScanned.url);
  expect(last.riskIndicators).toContain('EXCESSIVE_SCANS');

  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

/** A browser context (its own cookie jar) whose page records every request and every CSP refusal. */
async function newPage(viewport: Viewport = 'desktop'): Promise<{ context: BrowserContext; page: Page; requests: string[] }> {
  const context = await browser.newContext({ viewport: viewports[viewport], locale: 'en-GB', acceptDownloads: true });
  const page = await context.newPage();
  const requests: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) cspViolations.push(message.text());
  });
  return { context, page, requests };
}

async function signIn(page: Page, apiKey: string): Promise<void> {
  await page.goto(`${t.url}/console/`);
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** Waits until the page has its heading and nothing is loading any more. */
async function settled(page: Page): Promise<void> {
  try {
    await page.locator('main h1').first().waitFor({ timeout: 10_000 });
    // Polled from here: the page's CSP (rightly) refuses the eval that waitForFunction's string form needs.
    await expect.poll(() => page.locator('.state-loading').count(), { timeout: 10_000 }).toBe(0);
  } catch (error) {
    throw new Error(`${page.url()} did not settle: ${await textOf(page)}`, { cause: error });
  }
}

/** Opens a console page by its path, as a deep link (the gateway answers it with the app). */
async function open(page: Page, path: string): Promise<void> {
  const response = await page.goto(`${t.url}/console${path}`);
  expect(response?.status()).toBe(200);
  await settled(page);
}

// biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is the text a person sees
const textOf = (page: Page, selector = 'body') => page.locator(selector).first().innerText();

interface Focused {
  id: string;
  name: string | null;
  value: string | null;
  type: string | null;
  checked: boolean;
  text: string;
}

/** What has the keyboard focus: enough to tell fields, radios, checkboxes and buttons apart. */
const focused = async (page: Page) =>
  (await page.evaluate(`(() => {
    const element = document.activeElement;
    return {
      id: element?.id ?? '',
      name: element?.getAttribute('name') ?? null,
      value: element?.getAttribute('value') ?? null,
      type: element?.getAttribute('type') ?? null,
      checked: element?.checked === true,
      text: (element?.textContent ?? '').trim(),
    };
  })()`)) as Focused;

/** Presses Tab (Shift+Tab with `back`) until the focused element is the one sought. */
async function tabTo(page: Page, sought: (element: Focused) => boolean, what: string, back = false): Promise<Focused> {
  for (let step = 0; step < 200; step += 1) {
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    const element = await focused(page);
    if (sought(element)) return element;
  }
  throw new Error(`${what} was not reached by ${back ? 'Shift+Tab' : 'Tab'}`);
}

/** Serious or critical axe-core issues (WCAG 2.2 AA) of the page as it is now. */
async function seriousAxeIssues(page: Page): Promise<unknown[]> {
  // Injected through the DevTools protocol, which the page's CSP (rightly) does not govern.
  await page.evaluate(axeSource);
  const results = (await page.evaluate(
    `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } })`,
  )) as { violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> };
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => [violation.id, violation.nodes.map((node) => node.target)]);
}

/** A CSV of `count` rows whose metadata is ~15.5 KB of JSON each (the API takes up to 16 KiB a code). */
function largeRowsCsv(prefix: string, count: number, ofGtin = gtin): string {
  const notes = 'Provenance notes kept with the code. '.repeat(430).slice(0, 15_400);
  const lines = ['gtin,serial,batch,name,notes'];
  for (let row = 1; row <= count; row += 1)
    lines.push(`${ofGtin},${prefix}-${String(row).padStart(3, '0')},LOT-L,Large pen ${row},${notes}`);
  return lines.join('\n');
}

/** Records every value the batch page's progress bar shows, in order (read back with `progressSeen`). */
const watchProgress = (page: Page) =>
  page.evaluate(`(() => {
    const seen = (window.progressSeen = []);
    new MutationObserver(() => {
      const value = document.querySelector('#batch-progress')?.getAttribute('value');
      if (value != null && seen[seen.length - 1] !== value) seen.push(value);
    }).observe(document.body, { subtree: true, childList: true, attributes: true });
  })()`);
const progressSeen = async (page: Page) => ((await page.evaluate('window.progressSeen')) as string[]).map(Number);

const resultColumns = ['line', 'gtin', 'serial', 'batch', 'expiry', 'status', 'url', 'assetId', 'error'] as const;
type ResultRow = Record<(typeof resultColumns)[number], string>;

/** The fields of one CSV line (RFC 4180 quoting; the results hold no line breaks inside a field). */
function csvFields(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < line.length; index += 1) {
    const character = line[index]!;
    if (quoted && character === '"' && line[index + 1] === '"') {
      field += '"';
      index += 1;
    } else if (character === '"') quoted = !quoted;
    else if (character === ',' && !quoted) {
      fields.push(field);
      field = '';
    } else field += character;
  }
  fields.push(field);
  return fields;
}

/** The results CSV the batch page offers, downloaded, as rows of fields by column name. */
async function downloadResults(page: Page): Promise<{ name: string; rows: ResultRow[] }> {
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: /Download results/ }).click(),
  ]);
  const [header, ...lines] = (await readFile(await download.path(), 'utf8')).trim().split(/\r?\n/);
  expect(header).toBe(resultColumns.join(','));
  const rows = lines.map((line) => {
    const fields = csvFields(line);
    expect(fields, line).toHaveLength(resultColumns.length);
    return Object.fromEntries(resultColumns.map((column, index) => [column, fields[index] ?? ''])) as ResultRow;
  });
  return { name: download.suggestedFilename(), rows };
}

describe('the console in Chromium', () => {
  let main: Awaited<ReturnType<typeof newPage>>;

  beforeAll(async () => {
    main = await newPage();
  });

  afterAll(async () => {
    await main?.context.close();
  });

  it('signs in with an API key: an HttpOnly session cookie, and the key kept nowhere in the browser', async () => {
    const { page, context } = main;
    await page.goto(`${t.url}/console`);
    // The console asks the server for a session first, so sign-in shows once that answer is in.
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    // A wrong key: the API's message next to the field.
    await page.getByLabel('API key').fill('svc_live_not-a-real-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#api-key-error').waitFor();
    expect(await page.locator('#api-key').getAttribute('aria-invalid')).toBe('true');

    await signIn(page, brand);
    await settled(page);
    expect(await textOf(page, 'main h1')).toBe('Overview');
    expect(await textOf(page, 'header')).toMatch(/Console Brand/);
    const [cookie] = (await context.cookies()).filter((candidate) => candidate.name === 'hallmark_session');
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Strict');
    const stored = await page.evaluate('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })');
    expect(stored).not.toContain(brand);
    expect(await page.content()).not.toContain(brand);
    // Nor in any cookie: neither those a script reads nor the HttpOnly ones the browser keeps.
    expect(await page.evaluate('document.cookie')).not.toContain(brand);
    const cookies = await context.cookies();
    expect(cookies.length).toBeGreaterThan(0);
    for (const held of cookies) expect(`${held.name}=${held.value}`).not.toContain(brand);
    expect(await page.locator('#api-key').count()).toBe(0);
  });

  it('shows on the overview the verdicts the API answered: authentic, tampered (counterfeit) and over-scanned (suspicious)', async () => {
    const { page } = main;
    await open(page, '/');
    for (const [period, label] of [
      ['24h', 'Last 24 hours (UTC)'],
      ['7d', 'Last 7 days (UTC)'],
      ['30d', 'Last 30 days (UTC)'],
    ]) {
      const row = page.locator(`tr[data-period="${period}"]`);
      expect(await textOf(page, `tr[data-period="${period}"] th`)).toBe(label);
      for (const verdict of ['AUTHENTIC', 'SUSPICIOUS', 'COUNTERFEIT'] as const) {
        expect(await row.locator(`td[data-verdict="${verdict}"]`).textContent(), `${period} ${verdict}`).toBe(
          String(verdictCounts[verdict]),
        );
      }
    }
    expect(verdictCounts.SUSPICIOUS).toBeGreaterThan(0);
    const suspicious = await textOf(page, 'section[aria-labelledby="recent-suspicious"]');
    expect(suspicious).toContain(overScannedSerial);
    expect(suspicious).toContain('Scanned too often');
    const counterfeit = await textOf(page, 'section[aria-labelledby="recent-counterfeit"]');
    expect(counterfeit).toContain(tamperedSerial);
    expect(await page.locator('svg.chart-svg rect.bar').count()).toBe(9);
    // Whole UTC hours and days, and the page says which.
    expect(await textOf(page, 'section[aria-labelledby="verdicts-heading"]')).toMatch(
      /the last 24 hours are this hour and the 23 before it .*the last 7 days today and the 6 days before/,
    );
    const reported = await textOf(page, 'section[aria-labelledby="reported-heading"]');
    expect(reported).toContain('PEN-A1');
    expect(reported).toContain('Seen at a market stall');
  });

  it('creates a key, shows its secret once, the key works over HTTP, then revoked the API refuses it', async () => {
    const { page } = main;
    await open(page, '/settings/keys');
    // Nothing filled in: the errors stand next to their fields.
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#key-name-error').waitFor();
    await page.locator('#key-scopes-error').waitFor();

    await page.getByLabel('Description').fill('Browser-made reader');
    await page.getByRole('checkbox', { name: 'assets:read' }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretField = page.locator('#new-secret');
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^svc_live_/);
    expect(await textOf(page, '.secret-panel')).toMatch(/shown only this once/);
    const row = page.locator('tr', { hasText: 'Browser-made reader' });
    expect(await row.locator('.badge').textContent()).toBe('Active');
    expect(await row.textContent()).toContain('assets:read');

    // The new key, from the test over HTTP: it reads, and only reads.
    expect((await api('GET', '/scans', { key: secret })).status).toBe(200);
    expect((await api('POST', '/code/generate', { key: secret, body: { gtin, serialNumber: 'X-1' } })).body.error?.code).toBe(
      'INSUFFICIENT_SCOPE',
    );

    // Shown once: gone when dismissed, and not on the page again after a reload.
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.locator('#new-secret').count()).toBe(0);
    await open(page, '/settings/keys');
    expect(await page.content()).not.toContain(secret);

    await page
      .locator('tr', { hasText: 'Browser-made reader' })
      .getByRole('button', { name: /Revoke/ })
      .click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.locator('tr', { hasText: 'Browser-made reader' }).locator('.badge', { hasText: 'Revoked' }).waitFor();
    const refused = await api('GET', '/scans', { key: secret });
    expect(refused.status).toBe(401);
    expect(refused.body.error?.code).toBe('REVOKED_API_KEY');
  });

  it('creates a key restricted to a GTIN: a wrong check digit is refused beside its field, and the key reaches that GTIN alone', async () => {
    const { page } = main;
    await open(page, '/settings/keys');
    const form = page.locator('form.create-key');
    await form.getByLabel('Description').fill('Browser-made restricted reader');
    await form.getByRole('checkbox', { name: 'assets:read' }).check();
    const wrongDigit = `${gtin.slice(0, 13)}${(Number(gtin[13]) + 1) % 10}`;
    await form.getByLabel('Restrict to GTINs (optional)').fill(wrongDigit);
    await form.getByRole('button', { name: 'Create key' }).click();
    expect(await page.locator('#key-gtins-error').textContent()).toMatch(/restrictions\.gtins\.0 the check digit is/);
    await form.getByLabel('Restrict to GTINs (optional)').fill(gtin);
    await form.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.locator('#new-secret').inputValue();
    expect(await page.locator('tr', { hasText: 'Browser-made restricted reader' }).textContent()).toContain(gtin);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect((await api('GET', `/scans?gtin=${gtin}`, { key: secret })).status).toBe(200);
    expect((await api('GET', '/scans', { key: secret })).body.error?.code).toBe('KEY_RESTRICTED');
  });

  it('signed in with a key restricted to a GTIN: only the pages it can use, its codes listed for its GTIN, the others hidden and told why', async () => {
    const made = await api('POST', '/keys', {
      key: brand,
      body: { name: 'Reseller console', scopes: ['assets:read', 'assets:create'], restrictions: { gtins: [gtin] } },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const reseller = await newPage();
    try {
      const { page } = reseller;
      await signIn(page, made.body.secret);
      expect(await textOf(page, '.who')).toContain(`restricted to GTINs ${gtin}`);
      expect(await page.locator('nav.main-nav li').allInnerTexts()).toEqual(['Codes', 'Blocklist']);
      expect(await textOf(page, 'nav.main-nav')).toMatch(/Not shown for this key, restricted to some GTINs: Overview, .*Usage\./);
      await open(page, '/');
      expect(await textOf(page, 'main')).toContain(`the key you signed in with is restricted to the GTINs ${gtin}`);
      // Its codes, listed for its GTIN without asking (the API lists a restricted key's one GTIN at a time).
      await open(page, '/codes');
      expect(await page.getByLabel('GTIN').inputValue()).toBe(gtin);
      expect(await page.locator('main table tbody tr').count()).toBeGreaterThan(0);
      expect(await textOf(page, 'main')).not.toMatch(/KEY_RESTRICTED/);
      await open(page, '/blocklist');
      expect(await textOf(page, 'main')).not.toMatch(/KEY_RESTRICTED/);
    } finally {
      await reseller.context.close();
    }
  });

  it('shows the blocks one key made, from the keys page, and removes them all after asking', async () => {
    const { page } = main;
    const line = await api('POST', '/keys', { key: brand, body: { name: 'Leaky line', scopes: ['assets:create'] } });
    expect(line.status, JSON.stringify(line.body)).toBe(201);
    for (const serial of ['LEAK-1', 'LEAK-2']) {
      const blocked = await api('POST', '/blocklist', { key: line.body.secret, body: { gtin, serial, kind: 'withdrawn' } });
      expect(blocked.status, JSON.stringify(blocked.body)).toBe(201);
    }
    await open(page, '/settings/keys');
    await page
      .locator('tr', { hasText: 'Leaky line' })
      .getByRole('link', { name: /Blocks it made/ })
      .click();
    await settled(page);
    expect(await textOf(page, 'main')).toContain(`Blocks made by the API key ${line.body.id}`);
    expect(await page.locator('main table tbody tr').count()).toBe(2);
    await page.getByRole('button', { name: 'Remove all blocks this key made' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Remove them all' }).click();
    await page.getByText('Removed 2 blocks this key made.').waitFor();
    expect((await api('GET', `/blocklist?createdBy=${line.body.id}&status=active`, { key: brand })).body.blocks).toEqual([]);
  });

  it('rotates a key: a new secret shown once, the old key ending now', async () => {
    const { page } = main;
    const { oldSecret, secret } = await rotateFromKeysPage(page, 'Line scanner');
    expect(secret).toMatch(/^svc_live_/);
    expect(secret).not.toBe(oldSecret);
    expect(await textOf(page, '.secret-panel')).toMatch(/The old key stops working at/);
    // The focus is on the secret shown this once, so a keyboard or screen-reader user finds it.
    await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe('secret-heading');
    expect((await api('GET', '/scans', { key: secret })).status).toBe(200);
    await expect.poll(async () => (await api('GET', '/scans', { key: oldSecret })).status).toBe(401);
    await page.getByRole('button', { name: 'I have stored it' }).click();

    // The key this console is signed in with cannot end at once (the page would sign out before its
    // new secret was copied, for good), and revoking it says the console signs out.
    const own = page.locator('tr', { hasText: 'you are signed in with it' });
    await own.getByRole('button', { name: /Rotate/ }).click();
    const rotateOwn = page.getByRole('dialog');
    expect(await rotateOwn.getByRole('radio', { name: 'Now' }).isDisabled()).toBe(true);
    expect(await rotateOwn.textContent()).toContain('You are signed in with this key');
    await rotateOwn.getByRole('button', { name: 'Cancel' }).click();
    await own.getByRole('button', { name: /Revoke/ }).click();
    const revokeOwn = page.getByRole('dialog');
    expect(await revokeOwn.textContent()).toContain('You are signed in with this key');
    await revokeOwn.getByRole('button', { name: 'Cancel' }).click();
  });

  it('generates a batch from a CSV: progress, errors by line, and the results as a CSV with links', async () => {
    const { page } = main;
    await open(page, '/codes/batch');
    const csv = [
      'gtin,serial,batch,name',
      `${gtin},CSV-001,LOT-9,Blue pen`,
      // The GTIN as a spreadsheet leaves it, without its leading zero: sent as the GTIN-14.
      `${gtin.slice(1)},CSV-002,LOT-9,Red pen`,
      '12345678901234,CSV-003,LOT-9,Bad check digit',
      `${gtin},,LOT-9,No serial`,
      `${gtin},CSV-001,LOT-9,Same serial again`,
    ].join('\n');
    await page.getByLabel('CSV file').setInputFiles({ name: 'pens.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByText('3 rows that cannot be sent').or(page.getByText('4 rows to generate')).first().waitFor();
    await page.getByRole('button', { name: 'Generate codes' }).click();
    await page.getByText(/codes created/).waitFor();
    expect(await textOf(page, '[aria-labelledby="batch-results-heading"]')).toMatch(/2 codes created, 3 rows failed/);
    expect(await page.locator('progress').getAttribute('value')).toBe('4');
    const errors = await textOf(page, 'table.batch-errors');
    expect(errors).toMatch(/4\s+CSV-003\s+.*INVALID_GTIN/);
    expect(errors).toMatch(/5\s+—\s+serialNumber missing/);
    expect(errors).toMatch(/6\s+CSV-001\s+.*DUPLICATE_SERIAL/);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: /Download results/ }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('pens-results.csv');
    const results = (await readFile(await download.path(), 'utf8')).trim().split(/\r?\n/);
    expect(results[0]).toBe('line,gtin,serial,batch,expiry,status,url,assetId,error');
    expect(results).toHaveLength(6);
    const created = results.filter((line) => line.includes(',created,'));
    expect(created).toHaveLength(2);
    expect(results.find((line) => line.includes(',CSV-002,'))).toMatch(new RegExp(`^3,${gtin},CSV-002,LOT-9,,created,`));
    // The links in the download are real codes: each verifies as authentic.
    const link = created[0]!.split(',')[6]!;
    expect((await verify(link)).verdict).toBe('AUTHENTIC');
  });

  it('sends rows with large metadata in several requests within the byte budget, the progress bar moving with each', async () => {
    const { page } = main;
    await open(page, '/codes/batch');
    const bodies: number[] = [];
    const onRequest = (request: import('playwright-core').Request) => {
      if (request.method() === 'POST' && request.url().endsWith('/api/v1/code/generate/batch'))
        bodies.push(Buffer.byteLength(request.postData() ?? ''));
    };
    page.on('request', onRequest);
    try {
      const rows = 150;
      await page
        .getByLabel('CSV file')
        .setInputFiles({ name: 'large.csv', mimeType: 'text/csv', buffer: Buffer.from(largeRowsCsv('BIG', rows)) });
      await page.getByText(`${rows} rows to generate`).waitFor();
      await watchProgress(page);
      await page.getByRole('button', { name: 'Generate codes' }).click();
      await page.getByText(/codes created/).waitFor({ timeout: 90_000 });
      expect(await textOf(page, '[aria-labelledby="batch-results-heading"]')).toMatch(`${rows} codes created, 0 rows failed`);
      // At least three requests, none past the 1,000,000-byte budget (the route itself takes 16 MB).
      expect(bodies.length).toBeGreaterThanOrEqual(3);
      for (const bytes of bodies) expect(bytes).toBeLessThanOrEqual(1_000_000);
      // The bar moved once per request answered: 0, then each request's rows added, up to all of them.
      const seen = await progressSeen(page);
      expect(seen[0]).toBe(0);
      expect(seen.at(-1)).toBe(rows);
      expect(seen).toHaveLength(bodies.length + 1);
      for (let step = 1; step < seen.length; step += 1) expect(seen[step]!).toBeGreaterThan(seen[step - 1]!);
      expect(await textOf(page, '.progress label')).toBe(
        `${rows} of ${rows} rows answered (${bodies.length} of ${bodies.length} requests)`,
      );

      const results = await downloadResults(page);
      expect(results.name).toBe('large-results.csv');
      expect(results.rows).toHaveLength(rows);
      for (let row = 1; row <= rows; row += 1) {
        const serial = `BIG-${String(row).padStart(3, '0')}`;
        const result = results.rows.find((candidate) => candidate.serial === serial);
        expect(result?.line, serial).toBe(String(row + 1));
        expect(result?.status, serial).toBe('created');
        expect(result?.url, serial).toMatch(new RegExp(`/01/${gtin}/21/${serial}/10/LOT-L\\?`));
      }
      expect((await verify(results.rows.at(-1)!.url)).verdict).toBe('AUTHENTIC');
    } finally {
      page.off('request', onRequest);
    }
  });

  it('switches between live and test without mixing their data', async () => {
    const { page } = main;
    await open(page, '/');
    await page.getByRole('radio', { name: 'Test' }).click();
    await page.getByText('Test environment: you are seeing test data only.').waitFor();
    await settled(page);
    const testRow = page.locator('tr[data-period="30d"]');
    for (const verdict of ['AUTHENTIC', 'SUSPICIOUS', 'COUNTERFEIT']) {
      expect(await testRow.locator(`td[data-verdict="${verdict}"]`).textContent()).toBe('0');
    }
    // A session switched to test makes test keys: the form offers the session's environment, not the
    // live key's (the API refuses a live key from a test session).
    await open(page, '/settings/keys');
    const form = page.locator('form.create-key');
    expect(
      await form
        .locator('input[name="key-environment"]')
        .evaluateAll((radios) => radios.map((radio) => (radio as unknown as { value: string }).value)),
    ).toEqual(['test']);
    expect(await form.getByRole('radio', { name: 'Test' }).isChecked()).toBe(true);
    expect(await textOf(page, 'form.create-key')).toMatch(/This session is in the test environment, so it makes test keys/);
    await form.getByLabel('Description').fill('Made in test');
    await form.getByRole('checkbox', { name: 'assets:read' }).check();
    await form.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.locator('#new-secret').inputValue();
    expect(secret).toMatch(/^svc_test_/);
    expect(await page.locator('tr', { hasText: 'Made in test' }).locator('td').nth(1).textContent()).toBe('test');
    expect((await api('GET', '/scans', { key: secret })).status).toBe(200);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await open(page, '/');
    await page.getByRole('radio', { name: 'Live' }).click();
    await page.getByText('Test environment').waitFor({ state: 'detached' });
    await settled(page);
    expect(await page.locator('tr[data-period="30d"] td[data-verdict="AUTHENTIC"]').textContent()).toBe(
      String(verdictCounts.AUTHENTIC),
    );
  });

  it('has every page at phone and desktop size: screenshots, no sideways scrolling, no request elsewhere, no CSP refusal', async () => {
    const { page, requests } = main;
    for (const viewport of Object.keys(viewports) as Viewport[]) {
      await page.setViewportSize(viewports[viewport]);
      for (const [name, path] of pages()) {
        await open(page, path);
        await page.screenshot({ path: join(artifacts, `${name}-${viewport}.png`), fullPage: true });
        const overflow = (await page.evaluate(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        )) as number;
        expect(overflow, `${name} at ${viewport}`).toBeLessThanOrEqual(0);
      }
    }
    expect(requests.filter((url) => !url.startsWith(t.url) && !url.startsWith('blob:'))).toEqual([]);
    expect(cspViolations).toEqual([]);
  });

  it('has no serious or critical accessibility issue on any page (axe-core, WCAG 2.2 AA)', async () => {
    const { page } = main;
    const check = async (name: string) => {
      // Injected through the DevTools protocol, which the page's CSP (rightly) does not govern.
      await page.evaluate(axeSource);
      const results = (await page.evaluate(
        `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } })`,
      )) as { violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }>; passes: unknown[] };
      const serious = results.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
      expect(
        serious,
        `${name}: ${JSON.stringify(serious.map((violation) => [violation.id, violation.nodes.map((node) => node.target)]))}`,
      ).toEqual([]);
      expect(results.passes.length).toBeGreaterThan(5);
    };
    for (const viewport of Object.keys(viewports) as Viewport[]) {
      await page.setViewportSize(viewports[viewport]);
      for (const [name, path] of pages()) {
        await open(page, path);
        await check(`${name} at ${viewport}`);
      }
    }
    // The dialogs and the secret panel too.
    await page.setViewportSize(viewports.desktop);
    await open(page, '/settings/keys');
    await page
      .locator('tr', { hasText: 'you are signed in with it' })
      .getByRole('button', { name: /Rotate/ })
      .click();
    await page.getByRole('dialog').waitFor();
    await check('rotate dialog');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
  });

  it('works by keyboard alone: skip link, navigation and forms', async () => {
    const { page } = main;
    await open(page, '/');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Skip to content');
    // Tab to the Codes link and follow it with Enter.
    for (let step = 0; step < 15; step += 1) {
      await page.keyboard.press('Tab');
      if ((await page.evaluate('document.activeElement?.textContent')) === 'Codes') break;
    }
    await page.keyboard.press('Enter');
    await settled(page);
    expect(await textOf(page, 'main h1')).toBe('Codes');
    // Focus moved to the new page's content, not left on the link.
    expect(await page.evaluate('document.activeElement?.id')).toBe('main');
    await tabTo(page, (element) => element.id === 'search-serial', 'the Serial field');
    await page.keyboard.type('PEN-A1');
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'PEN-A1' }).waitFor();
    await tabTo(page, (element) => element.text === 'PEN-A1', 'the PEN-A1 link');
    await page.keyboard.press('Enter');
    await settled(page);
    expect(await textOf(page, 'main h1')).toMatch(/PEN-A1/);
    expect(page.url()).toContain(encodeURIComponent(codeAssetId));
  });

  it('creates a key by keyboard alone: description, environment, a scope, submit', async () => {
    const { page } = main;
    await open(page, '/settings/keys');
    // From the top of the page, by Tab only, to the form's first field.
    await tabTo(page, (element) => element.id === 'key-name', 'the Description field');
    await page.keyboard.type('Keyboard-made reader');
    // The environment: Tab enters the group on the checked radio (the session's, live); the arrow keys choose within it.
    expect(await tabTo(page, (element) => element.name === 'key-environment', 'the environment')).toMatchObject({
      value: 'live',
      checked: true,
    });
    await page.keyboard.press('ArrowDown');
    expect(await focused(page)).toMatchObject({ name: 'key-environment', value: 'test', checked: true });
    // Tab through the scope checkboxes to assets:read; Space ticks it.
    await tabTo(page, (element) => element.name === 'scope' && element.value === 'assets:read', 'the assets:read scope');
    await page.keyboard.press('Space');
    expect(await focused(page)).toMatchObject({ value: 'assets:read', checked: true });
    // Shift+Tab goes back to the scope before it, left alone; Tab returns.
    expect(await tabTo(page, (element) => element.name === 'scope', 'the scope before', true)).toMatchObject({
      value: 'assets:create',
      checked: false,
    });
    await page.keyboard.press('Tab');
    expect(await focused(page)).toMatchObject({ value: 'assets:read', checked: true });
    // On to the button, and Enter submits.
    await tabTo(page, (element) => element.text === 'Create key', 'the Create key button');
    await page.keyboard.press('Enter');
    const secret = await page.locator('#new-secret').inputValue();
    expect(secret).toMatch(/^svc_test_/);
    expect(await textOf(page, '.secret-panel')).toMatch(/New key: Keyboard-made reader/);
    // The key exists and holds what was chosen: it reads test data, and only reads.
    expect((await api('GET', '/scans', { key: secret })).status).toBe(200);
    expect((await api('POST', '/code/generate', { key: secret, body: { gtin, serialNumber: 'KB-1' } })).body.error?.code).toBe(
      'INSUFFICIENT_SCOPE',
    );
    await tabTo(page, (element) => element.text === 'I have stored it', 'the I have stored it button');
    await page.keyboard.press('Enter');
    await page.locator('#new-secret').waitFor({ state: 'detached' });
  });

  it('shows a code: its QR image, a PNG at print size, and blocks and unblocks it (issue #21)', async () => {
    const { page } = main;
    await open(page, `/codes/${encodeURIComponent(codeAssetId)}`);
    const link = await page.locator('[aria-labelledby="link-heading"] a.code').getAttribute('href');
    expect(link).toContain('/21/PEN-A1');
    // Its scan history says who asked: the brand's own key, then a shopper on the public page.
    const history = page.locator('section[aria-labelledby="history-heading"]');
    await history.locator('td[data-scanned-by="public"]').waitFor();
    expect(await history.locator('td[data-scanned-by]').allTextContents()).toEqual(['Public page', 'Your account']);
    await expect
      .poll(() => page.locator('img.qr').evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth))
      .toBeGreaterThan(0);
    expect(await textOf(page, 'main')).toMatch(/Console test pen/);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: /Download PNG/ }).click(),
    ]);
    const png = await readFile(await download.path());
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    // At least the print size the page claims: the IHDR chunk (right after the 8-byte signature) holds
    // the width and height in pixels.
    const claim = /Download PNG \((\d+) mm at (\d+) dpi\)/.exec(await textOf(page, 'main'));
    expect(claim).not.toBeNull();
    const [mm, dpi] = [Number(claim![1]), Number(claim![2])];
    // To the nearest whole pixel, as the API sizes it: 25 mm at 300 dpi is 295.3, so 295.
    const pixels = Math.round((mm / 25.4) * dpi);
    expect(pixels).toBeGreaterThan(100);
    expect(png.subarray(12, 16).toString()).toBe('IHDR');
    const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
    expect(width).toBeGreaterThanOrEqual(pixels);
    expect(height).toBeGreaterThanOrEqual(pixels);
    // The file records the density (pHYs, pixels per metre), so it prints at the size claimed, within half a pixel.
    const density = png.indexOf('pHYs');
    expect(density).toBeGreaterThan(0);
    const perMetre = png.readUInt32BE(density + 4);
    expect(Math.round(perMetre * 0.0254)).toBe(dpi);
    expect((width / perMetre) * 1000).toBeGreaterThanOrEqual(mm - 25.4 / dpi / 2);

    await page.getByLabel('Reason (optional)').fill('Seen on fakes in a market');
    await page.getByRole('button', { name: 'Block code' }).click();
    // Nothing is blocked before the person confirms what it does.
    const confirmBlock = page.getByRole('dialog', { name: 'Block this code?' });
    await confirmBlock.waitFor();
    expect(await confirmBlock.textContent()).toContain('answers COUNTERFEIT');
    const before = await api('GET', '/blocklist?status=active&limit=100', { key: brand });
    expect(before.body.blocks.map((entry: Json) => entry.serialFrom)).not.toContain('PEN-A1');
    await confirmBlock.getByRole('button', { name: 'Block code' }).click();
    await page.getByRole('heading', { name: 'Blocked', exact: true }).waitFor();
    const blocked = await verify(link!);
    expect(blocked.verdict).toBe('COUNTERFEIT');
    expect(blocked.blocked?.reason).toBe('Seen on fakes in a market');
    await page.getByRole('button', { name: 'Unblock' }).click();
    await page.getByRole('dialog', { name: 'Unblock this code?' }).getByRole('button', { name: 'Unblock' }).click();
    await page.getByRole('heading', { name: 'Block this code', exact: true }).waitFor();
    const unblocked = await verify(link!);
    expect(unblocked.verdict).not.toBe('COUNTERFEIT');
    expect(unblocked.blocked).toBeUndefined();
  });

  it('reviews reports: confirms one (its code verifies SUSPICIOUS, a known counterfeit pattern), lifts that block from the code page, and shows the API’s refusal of a report decided meanwhile', async () => {
    const { page } = main;
    const suspect = await generate('PEN-R1');
    const other = await generate('PEN-R2');
    const file = async (url: string, reason: string) => {
      const filed = await api('POST', '/code/report', { key: brand, body: { url, reason } });
      expect(filed.status, JSON.stringify(filed.body)).toBe(201);
      return filed.body.reportId as string;
    };
    const confirmed = await file(suspect.url, 'Hologram missing');
    const decidedElsewhere = await file(other.url, 'Box looked different');
    // Anyone may file a report: a stranger's words are shown to the brand as text, never as markup.
    const stranger = await api('POST', '/accounts', {
      key: t.product.generatedOperatorKey as string,
      body: { name: 'Stranger', tier: 'enterprise' },
    });
    expect(stranger.status, JSON.stringify(stranger.body)).toBe(201);
    const payload = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>';
    const hostile = await api('POST', '/code/report', {
      key: stranger.body.apiKey.secret,
      body: { url: other.url, reason: payload },
    });
    expect(hostile.status, JSON.stringify(hostile.body)).toBe(201);
    const row = (reportId: string) => page.locator(`tr[data-report="${reportId}"]`);
    const rowText = (reportId: string) => textOf(page, `tr[data-report="${reportId}"]`);

    await open(page, '/reports');
    expect(await rowText(confirmed)).toContain('Hologram missing');
    expect(await rowText(decidedElsewhere)).toContain('Box looked different');
    expect(await rowText(hostile.body.reportId)).toContain(payload);
    expect(await row(hostile.body.reportId).locator('img, script').count()).toBe(0);
    // In the decision dialog too, which quotes the reporter.
    await row(hostile.body.reportId)
      .getByRole('button', { name: /^Dismiss/ })
      .click();
    await page.getByRole('dialog').waitFor();
    expect(await textOf(page, 'dialog')).toContain(payload);
    expect(await page.locator('dialog img, dialog script').count()).toBe(0);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    // Had an onerror handler been made, it would have run by now.
    await page.waitForTimeout(200);
    expect(await page.evaluate('window.pwned')).toBeUndefined();
    await row(confirmed)
      .getByRole('button', { name: `Confirm: ${gtin} / PEN-R1` })
      .click();
    await page.getByRole('dialog').waitFor();
    expect(await seriousAxeIssues(page)).toEqual([]);
    await page.getByRole('dialog').getByLabel('Reason (optional)').fill('Hologram missing on fakes');
    await page.getByRole('button', { name: 'Confirm and block' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'PEN-R1: confirmed, the code is blocked.' }).waitFor();
    await settled(page);
    // Blocked at once, with the brand's words; and gone from the reports waiting for review.
    const blocked = await verify(suspect.url);
    expect(blocked.verdict).toBe('SUSPICIOUS');
    expect(blocked.riskIndicators).toContain('KNOWN_COUNTERFEIT_PATTERN');
    expect(blocked.confirmedReport?.reason).toBe('Hologram missing on fakes');
    expect(await row(confirmed).count()).toBe(0);

    // Dismissed through the API while the dialog is open: the console's dismissal is refused, said in the dialog.
    await row(decidedElsewhere)
      .getByRole('button', { name: `Dismiss: ${gtin} / PEN-R2` })
      .click();
    await page.getByRole('dialog').waitFor();
    const elsewhere = await api('POST', `/code/reports/${decidedElsewhere}/dismiss`, {
      key: brand,
      body: { reason: 'Our own staff scanned it twice' },
    });
    expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(200);
    await page.getByRole('button', { name: 'Dismiss report' }).click();
    await page.getByRole('dialog').getByRole('alert').waitFor();
    expect(await textOf(page, 'dialog')).toMatch(/already dismissed[\s\S]*CONFLICT/);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    // The list was read again: the report decided elsewhere left the waiting ones, its buttons with it.
    await expect.poll(() => row(decidedElsewhere).count()).toBe(0);

    // Under Confirmed, with the reason shown to verifiers; from there to the code, whose block is lifted.
    await page.getByRole('link', { name: 'Confirmed (blocking)' }).click();
    await settled(page);
    expect(await rowText(confirmed)).toContain('Hologram missing on fakes');
    await row(confirmed).getByRole('link').click();
    await page.getByRole('heading', { name: 'Blocked by a confirmed report' }).waitFor();
    await settled(page);
    await page.getByRole('button', { name: 'Lift the block' }).click();
    await page.getByRole('dialog').waitFor();
    await page.getByRole('dialog').getByLabel('Reason (optional)').fill('Confirmed in error');
    await page.getByRole('dialog').getByRole('button', { name: 'Lift the block' }).click();
    await page.getByRole('heading', { name: 'Block this code' }).waitFor();
    const lifted = await verify(suspect.url);
    expect(lifted.verdict).toBe('AUTHENTIC');
    expect(lifted.riskIndicators).not.toContain('KNOWN_COUNTERFEIT_PATTERN');
    expect(lifted.confirmedReport).toBeUndefined();
    await open(page, '/reports?status=lifted');
    const liftedRow = await rowText(confirmed);
    expect(liftedRow).toContain('Lifted');
    expect(liftedRow).toContain('Confirmed in error');
    expect(await row(confirmed).getByRole('button').count()).toBe(0);
    await open(page, '/reports?status=dismissed');
    expect(await rowText(decidedElsewhere)).toContain('Dismissed');
    // The owner's reason for the dismissal is shown with it.
    expect(await rowText(decidedElsewhere)).toContain('Why: “Our own staff scanned it twice”');

    // Lifted from the Reports page too: the stranger's report, confirmed through the API, under Confirmed.
    const confirmedByApi = await api('POST', `/code/reports/${hostile.body.reportId}/confirm`, {
      key: brand,
      body: { reason: 'Looked fake at first' },
    });
    expect(confirmedByApi.status, JSON.stringify(confirmedByApi.body)).toBe(200);
    expect((await verify(other.url)).riskIndicators).toContain('KNOWN_COUNTERFEIT_PATTERN');
    await open(page, '/reports?status=confirmed');
    await row(hostile.body.reportId)
      .getByRole('button', { name: `Lift block: ${gtin} / PEN-R2` })
      .click();
    await page.getByRole('dialog').getByLabel('Reason (optional)').fill('Genuine after all');
    await page.getByRole('dialog').getByRole('button', { name: 'Lift the block' }).click();
    await page.getByRole('status').filter({ hasText: 'PEN-R2: block lifted.' }).waitFor();
    await settled(page);
    expect(await row(hostile.body.reportId).count()).toBe(0);
    expect((await verify(other.url)).riskIndicators).not.toContain('KNOWN_COUNTERFEIT_PATTERN');

    // A key that may read but not decide sees the queue without the buttons, and is told why.
    const reader = await api('POST', '/keys', { key: brand, body: { name: 'Report reader', scopes: ['assets:read'] } });
    expect(reader.status, JSON.stringify(reader.body)).toBe(201);
    const readOnly = await newPage();
    try {
      await signIn(readOnly.page, reader.body.secret);
      await open(readOnly.page, '/reports?status=');
      expect(await textOf(readOnly.page, 'main')).toContain('Confirming, dismissing and lifting is hidden');
      expect(await readOnly.page.locator(`tr[data-report="${confirmed}"]`).count()).toBe(1);
      expect(await readOnly.page.locator('main table button').count()).toBe(0);
    } finally {
      await readOnly.context.close();
    }
  });

  it('manages webhook endpoints: the secret shown once signs the test, a failed message sent again, the secret rotated, disabling confirmed first, a disabled endpoint offered no test, deleted', async () => {
    const { page } = main;
    const received: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
    let failing = false;
    const receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ headers: request.headers, body: Buffer.concat(chunks).toString() });
        response.writeHead(failing ? 500 : 204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as AddressInfo).port;
    const hookUrl = `http://127.0.0.1:${port}/hooks`;
    const deliveriesOf = (messageId: string) => received.filter((each) => each.headers['webhook-id'] === messageId);
    /** The id of the test message the page just said it queued. */
    const queuedTest = async () => {
      const notice = page.getByRole('status').filter({ hasText: 'A test message' });
      await notice.waitFor();
      return /\((msg_[^)]+)\)/.exec(await textOf(page, '.notice.success'))?.[1] as string;
    };
    const messageRow = async (messageId: string) => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await settled(page);
      return (await page.locator(`tr[data-message="${messageId}"]`).count()) > 0
        ? textOf(page, `tr[data-message="${messageId}"]`)
        : '';
    };
    try {
      await open(page, '/settings/webhooks');
      expect(await textOf(page, 'main')).toContain('No endpoints in this environment.');
      // Credentials in the URL: refused by the API, and said at the field.
      await page.getByLabel('URL', { exact: true }).fill(`http://user:secret@127.0.0.1:${port}/hooks`);
      await page.getByRole('checkbox', { name: /^test / }).check();
      await page.getByRole('checkbox', { name: /^code\.unblocked / }).check();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.locator('#endpoint-url-error').waitFor();
      expect(await textOf(page, '#endpoint-url-error')).toMatch(/credentials/);

      await page.getByLabel('URL', { exact: true }).fill(hookUrl);
      await page.getByLabel('Description (optional)').fill('SOC pager');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const secretField = page.locator('#webhook-secret');
      await secretField.waitFor();
      const secret = await secretField.inputValue();
      expect(secret).toMatch(/^whsec_/);
      expect(await seriousAxeIssues(page)).toEqual([]);
      const row = page.locator('tr[data-endpoint]', { hasText: hookUrl });
      await row.waitFor();
      expect(await textOf(page, 'tr[data-endpoint]')).toMatch(/test, code\.unblocked|code\.unblocked, test/);
      // Shown once: the API never answers it again, and the page forgets it.
      const listed = await api('GET', '/webhooks/endpoints', { key: brand });
      expect(listed.status).toBe(200);
      expect(JSON.stringify(listed.body)).not.toContain(secret);
      // The key that made it (the session's), shown beside its date.
      const createdBy = listed.body.endpoints[0]?.createdBy as string;
      expect(createdBy).toMatch(/\S/);
      expect(await textOf(page, 'tr[data-endpoint]')).toContain(`by key ${createdBy}`);
      await page.getByRole('button', { name: 'I have stored it' }).click();
      expect(await secretField.count()).toBe(0);

      // A test message, signed with that secret, listed as delivered with the receiver's answer.
      await row.getByRole('button', { name: /^Send test/ }).click();
      const firstTest = await queuedTest();
      // The messages panel opens (or loads again) with it, without a Refresh.
      await page.locator(`tr[data-message="${firstTest}"]`).waitFor();
      await expect.poll(() => deliveriesOf(firstTest).length, { timeout: 10_000 }).toBe(1);
      const delivery = deliveriesOf(firstTest)[0]!;
      expect(new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>)).toMatchObject({
        type: 'test',
      });
      await expect.poll(() => messageRow(firstTest), { timeout: 10_000 }).toMatch(/delivered[\s\S]*204/);

      // The receiver fails every attempt: the message ends failed; once it answers again, Send again delivers it (same id).
      failing = true;
      await row.getByRole('button', { name: /^Send test/ }).click();
      const failedTest = await queuedTest();
      await expect.poll(() => messageRow(failedTest), { timeout: 10_000 }).toMatch(/failed[\s\S]*500/);
      expect(deliveriesOf(failedTest)).toHaveLength(4);
      failing = false;
      await page.getByRole('button', { name: `Send again ${failedTest}` }).click();
      await expect.poll(() => messageRow(failedTest), { timeout: 10_000 }).toMatch(/delivered[\s\S]*204/);
      expect(deliveriesOf(failedTest)).toHaveLength(5);

      // A leaked secret: rotated, the new one shown once; the next message verifies under it.
      await row.getByRole('button', { name: /^Rotate secret/ }).click();
      await page.getByRole('dialog').waitFor();
      expect(await textOf(page, 'dialog')).not.toContain('rotated recently');
      await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
      await secretField.waitFor();
      const rotated = await secretField.inputValue();
      expect(rotated).toMatch(/^whsec_/);
      expect(rotated).not.toBe(secret);
      expect(await textOf(page, '.secret-panel')).toMatch(/previous secret until/);
      await page.getByRole('button', { name: 'I have stored it' }).click();
      // A second rotation within the grace period would end the first secret at once: the dialog says so.
      await settled(page);
      await row.getByRole('button', { name: /^Rotate secret/ }).click();
      await page.getByRole('dialog').waitFor();
      expect(await textOf(page, 'dialog')).toContain('It was rotated recently');
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      await row.getByRole('button', { name: /^Send test/ }).click();
      const afterRotation = await queuedTest();
      await expect.poll(() => deliveriesOf(afterRotation).length, { timeout: 10_000 }).toBe(1);
      const signed = deliveriesOf(afterRotation)[0]!;
      expect(new Webhook(rotated).verify(signed.body, signed.headers as Record<string, string>)).toMatchObject({ type: 'test' });

      // A key that may read keys but not change them sees the endpoint, no secret and no buttons but Messages.
      const reader = await api('POST', '/keys', { key: brand, body: { name: 'Hook reader', scopes: ['keys:read'] } });
      expect(reader.status, JSON.stringify(reader.body)).toBe(201);
      const readOnly = await newPage();
      try {
        await signIn(readOnly.page, reader.body.secret);
        await open(readOnly.page, '/settings/webhooks');
        expect(await textOf(readOnly.page, 'main')).toContain('Creating, testing and changing endpoints is hidden');
        const seen = readOnly.page.locator('tr[data-endpoint]', { hasText: hookUrl });
        expect(await seen.getByRole('button').allTextContents()).toEqual([expect.stringMatching(/^Messages/)]);
        expect(await readOnly.page.locator('#webhook-secret').count()).toBe(0);
      } finally {
        await readOnly.context.close();
      }

      // Disabling asks first (the events of that time never reach the endpoint): cancelled, nothing
      // changes; confirmed, the badge says so, and no test is offered (the API would refuse it, 409);
      // enabled again, then deleted.
      await row.getByRole('button', { name: /^Disable/ }).click();
      const disabling = page.getByRole('dialog');
      await disabling.waitFor();
      expect(await disabling.textContent()).toContain('never reach it');
      expect(await seriousAxeIssues(page)).toEqual([]);
      await disabling.getByRole('button', { name: 'Cancel' }).click();
      expect((await api('GET', '/webhooks/endpoints', { key: brand })).body.endpoints[0].status).toBe('enabled');
      await row.getByRole('button', { name: /^Disable/ }).click();
      await page.getByRole('button', { name: 'Disable endpoint' }).click();
      await page.getByRole('status').filter({ hasText: 'is disabled' }).waitFor();
      await settled(page);
      expect(await textOf(page, 'tr[data-endpoint]')).toContain('Disabled');
      expect(await row.getByRole('button', { name: /^Send test/ }).count()).toBe(0);
      await row.getByRole('button', { name: /^Enable/ }).click();
      await page.getByRole('status').filter({ hasText: 'is enabled again' }).waitFor();
      await settled(page);
      expect(await textOf(page, 'tr[data-endpoint]')).toContain('Enabled');
      await row.getByRole('button', { name: /^Delete/ }).click();
      await page.getByRole('dialog').waitFor();
      expect(await seriousAxeIssues(page)).toEqual([]);
      await page.getByRole('button', { name: 'Delete endpoint' }).click();
      await page.getByRole('status').filter({ hasText: 'is deleted' }).waitFor();
      await settled(page);
      expect(await page.locator('tr[data-endpoint]').count()).toBe(0);
      const after = await api('GET', '/webhooks/endpoints', { key: brand });
      expect(after.body.endpoints).toEqual([]);
    } finally {
      receiver.closeAllConnections();
      receiver.close();
    }
  });

  it('signs out: the page goes back to sign-in and the session is over on the server', async () => {
    const { page, context } = main;
    await open(page, '/');
    const [cookie] = (await context.cookies()).filter((candidate) => candidate.name === 'hallmark_session');
    expect(cookie).toBeDefined();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    const after = await api('GET', '/sessions/current', { headers: { cookie: `hallmark_session=${cookie!.value}` } });
    expect(after.status).toBe(401);
  });
});

/** Every page of the console, by a name for its screenshot; the code page is the authentic code's. */
function pages(): Array<[string, string]> {
  return [
    ['overview', '/'],
    ['keys', '/settings/keys'],
    ['usage', '/usage'],
    ['generate-code', '/codes/new'],
    ['generate-batch', '/codes/batch'],
    ['codes', '/codes'],
    ['code', `/codes/${encodeURIComponent(codeAssetId)}`],
    ['reports', '/reports'],
    ['blocklist', '/blocklist'],
    ['webhooks', '/settings/webhooks'],
  ];
}

describe('a session whose key is revoked', () => {
  it('ends: the next call answers 401 and the console says why, in a dialog over the page; leaving it shows sign-in', async () => {
    const made = await api('POST', '/keys', { key: brand, body: { name: 'Short-lived', scopes: ['assets:read', 'keys:read'] } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const { context, page } = await newPage('phone');
    try {
      await signIn(page, made.body.secret);
      await settled(page);
      // A key without keys:write: creating keys is hidden, and the page says so.
      await open(page, '/settings/keys');
      expect(await textOf(page, 'main')).toMatch(/does not hold the keys:write scope/);
      await page.screenshot({ path: join(artifacts, 'keys-read-only-phone.png'), fullPage: true });
      expect((await api('POST', `/keys/${made.body.id}/revoke`, { key: brand })).status).toBe(200);
      await page.getByRole('link', { name: 'Overview' }).click();
      const ended = page.getByRole('dialog', { name: 'Your session ended' });
      await ended.waitFor({ timeout: 5_000 });
      expect(await seriousAxeIssues(page)).toEqual([]);
      await ended.getByRole('button', { name: 'Leave this page' }).click();
      await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor({ timeout: 5_000 });
      expect(await textOf(page)).toMatch(/Your session ended/);
    } finally {
      await context.close();
    }
  });

  it('keeps what was typed in a form: signed in again as the same account, the form is sent as it was', async () => {
    const made = await api('POST', '/keys', { key: brand, body: { name: 'Short-lived writer', scopes: ['*'] } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const { context, page } = await newPage('desktop');
    try {
      await signIn(page, made.body.secret);
      await open(page, '/codes/new');
      // The GTIN field says which GTINs the account may sign for (its grants, GET /gtins).
      await page.getByText(`Your account signs for ${gtin}.`).waitFor({ timeout: 5_000 });
      await page.getByLabel('GTIN').fill(gtin);
      await page.getByLabel('Serial number').fill('KEPT-THROUGH-SIGN-IN');
      await page.getByLabel('Batch (optional)').fill('LOT-KEPT');
      // The key is revoked while the form is open (before, the sign-in page replaced the form, and what was typed was lost).
      expect((await api('POST', `/keys/${made.body.id}/revoke`, { key: brand })).status).toBe(200);
      await page.getByRole('button', { name: 'Generate code', exact: true }).click();
      const ended = page.getByRole('dialog', { name: 'Your session ended' });
      await ended.waitFor({ timeout: 5_000 });
      await ended.getByLabel('API key').fill(brand);
      await ended.getByRole('button', { name: 'Sign in' }).click();
      await ended.waitFor({ state: 'detached', timeout: 5_000 });
      expect(await page.getByLabel('Serial number').inputValue()).toBe('KEPT-THROUGH-SIGN-IN');
      expect(await page.getByLabel('Batch (optional)').inputValue()).toBe('LOT-KEPT');
      await page.getByRole('button', { name: 'Generate code', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'Code generated' }).waitFor({ timeout: 5_000 });
      const found = await api('GET', `/codes?serial=KEPT-THROUGH-SIGN-IN`, { key: brand });
      expect(found.body.data, JSON.stringify(found.body)).toEqual([
        expect.objectContaining({ serialNumber: 'KEPT-THROUGH-SIGN-IN', batchNumber: 'LOT-KEPT' }),
      ]);
    } finally {
      await context.close();
    }
  });

  it('shows the sign-in page at both sizes (screenshots), and it passes axe', async () => {
    const { context, page } = await newPage('phone');
    try {
      for (const viewport of Object.keys(viewports) as Viewport[]) {
        await page.setViewportSize(viewports[viewport]);
        await page.goto(`${t.url}/console/`);
        await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
        await page.screenshot({ path: join(artifacts, `sign-in-${viewport}.png`), fullPage: true });
        await page.evaluate(axeSource);
        const results = (await page.evaluate(
          `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa', 'wcag22aa'] } })`,
        )) as {
          violations: Array<{ id: string; impact: string }>;
        };
        expect(results.violations.filter((violation) => ['serious', 'critical'].includes(violation.impact))).toEqual([]);
      }
    } finally {
      await context.close();
    }
  });
});

describe('a batch whose request is refused partway', () => {
  it('lists the refused request’s rows and the rows never sent as failed, with the API’s message, on screen and in the download', async () => {
    // A free account makes 100 codes a day: the first request (about 64 large rows) is served, the
    // second would pass the quota and is refused whole, the third is never sent.
    const operator = t.product.generatedOperatorKey as string;
    const created = await api('POST', '/accounts', { key: operator, body: { name: 'Console Free Brand', tier: 'free' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // A GTIN of its own (the other brand's is taken).
    const freeGtin = '09506000134376';
    const grant = await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { gtin: freeGtin } });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    // The quota counts per UTC day (the product's clock is the machine's here): the three requests in one day.
    await earlyInWindow(86_400_000, 60_000);
    const { context, page } = await newPage();
    try {
      await signIn(page, created.body.apiKey.secret);
      await open(page, '/codes/batch');
      const rows = 140;
      await page
        .getByLabel('CSV file')
        .setInputFiles({ name: 'quota.csv', mimeType: 'text/csv', buffer: Buffer.from(largeRowsCsv('QUOTA', rows, freeGtin)) });
      await page.getByText(`${rows} rows to generate`).waitFor();
      await page.getByRole('button', { name: 'Generate codes' }).click();
      await page.getByText(/codes created/).waitFor({ timeout: 60_000 });
      const alert = await textOf(page, '.state-error');
      expect(alert).toMatch(/Request 2 of 3 failed: .*\(RATE_LIMITED\)/);

      const results = await downloadResults(page);
      // Every row is in the download, once, by its line.
      expect(results.rows.map((row) => Number(row.line))).toEqual(Array.from({ length: rows }, (_, index) => index + 2));
      const made = results.rows.filter((row) => row.status === 'created');
      const failed = results.rows.filter((row) => row.status === 'failed');
      expect(made.length).toBeGreaterThan(0);
      expect(made.length).toBeLessThanOrEqual(100);
      expect(made.length + failed.length).toBe(rows);
      // The first request's rows were made; after them, none.
      expect(made.map((row) => Number(row.line))).toEqual(Array.from({ length: made.length }, (_, index) => index + 2));
      const refused = failed.filter((row) => row.error.startsWith('Not generated: its request failed: '));
      const unsent = failed.filter((row) => row.error.startsWith('Not sent: an earlier request failed: '));
      expect(refused.length).toBeGreaterThan(0);
      expect(unsent.length).toBeGreaterThan(0);
      expect(refused.length + unsent.length).toBe(failed.length);
      for (const row of failed) {
        expect(row.error).toMatch(/Limit reached \(generate-per-day\).*\(RATE_LIMITED\)/);
        expect(row.url).toBe('');
      }
      expect(await textOf(page, '[aria-labelledby="batch-results-heading"]')).toMatch(
        `${made.length} codes created, ${failed.length} rows failed`,
      );
      // On screen too: each failed row by its line, with the message.
      const table = await textOf(page, 'table.batch-errors');
      for (const row of [failed[0]!, failed.at(-1)!]) {
        expect(table).toMatch(new RegExp(`${row.line}\\s+${row.serial}\\s+Not (generated|sent):.*RATE_LIMITED`));
      }
      expect(await page.locator('table.batch-errors tbody tr').count()).toBe(failed.length);
      expect(await seriousAxeIssues(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

/** Makes a key named `name` over HTTP, then rotates it on the keys page, ending the old one now; resolves with both secrets. */
async function rotateFromKeysPage(page: Page, name: string): Promise<{ oldSecret: string; secret: string }> {
  const old = await api('POST', '/keys', { key: brand, body: { name, scopes: ['assets:read'] } });
  expect(old.status, JSON.stringify(old.body)).toBe(201);
  await open(page, '/settings/keys');
  await page
    .locator('tr', { hasText: name })
    .getByRole('button', { name: /Rotate/ })
    .click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('radio', { name: 'Now' }).check();
  await dialog.getByRole('button', { name: 'Rotate key' }).click();
  return { oldSecret: old.body.secret as string, secret: await page.locator('#new-secret').inputValue() };
}

/** Runs `steps` in a page of its own, signed in with the brand's key; the page is closed after. */
async function inBrandPage(steps: (page: Page) => Promise<void>): Promise<void> {
  const { context, page } = await newPage();
  try {
    await signIn(page, brand);
    await steps(page);
  } finally {
    await context.close();
  }
}

/**
 * Routes `pattern` so the API carries out each request, but the answers of the first `lost` never
 * reach the page (the connection resets); later tries get theirs. Resolves with what each try sent
 * and was answered.
 */
async function loseAnswers(
  page: Page,
  pattern: string,
  lost: number,
): Promise<Array<{ key: string; replayed: boolean; body: Json }>> {
  const sent: Array<{ key: string; replayed: boolean; body: Json }> = [];
  await page.route(pattern, async (route) => {
    const response = await route.fetch();
    sent.push({
      key: route.request().headers()['idempotency-key'] ?? '',
      replayed: response.headers()['idempotent-replayed'] === 'true',
      body: (await response.json()) as Json,
    });
    if (sent.length <= lost) await route.abort('connectionreset');
    else await route.fulfill({ response });
  });
  return sent;
}

describe('a batch whose answer is lost', () => {
  /** A CSV of `count` small rows. */
  const smallRowsCsv = (prefix: string, count: number) =>
    ['gtin,serial,name', ...Array.from({ length: count }, (_, row) => `${gtin},${prefix}-${row + 1},Pen ${row + 1}`)].join('\n');

  async function generateFromCsv(page: Page, name: string, csv: string): Promise<void> {
    await open(page, '/codes/batch');
    await page.getByLabel('CSV file').setInputFiles({ name, mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByText(/rows to generate/).waitFor();
    await page.getByRole('button', { name: 'Generate codes' }).click();
    await page.getByText(/codes created/).waitFor({ timeout: 30_000 });
  }

  it('sends the request again with the same Idempotency-Key: its codes are made once, and listed as created', () =>
    inBrandPage(async (page) => {
      // The API carries out the first two tries, but their answers never reach the page.
      const sent = await loseAnswers(page, '**/api/v1/code/generate/batch', 2);
      await generateFromCsv(page, 'lost.csv', smallRowsCsv('LOST', 3));
      expect(sent).toHaveLength(3);
      expect(new Set(sent.map((attempt) => attempt.key)).size).toBe(1);
      // Made by the first try; the others were answered with what it made.
      expect(sent.map((attempt) => attempt.replayed)).toEqual([false, true, true]);
      const results = await downloadResults(page);
      expect(results.rows.map((row) => row.status)).toEqual(['created', 'created', 'created']);
      expect(results.rows.map((row) => row.assetId)).toEqual(
        ((sent[0]?.body.results ?? []) as Json[]).map((result) => result.code?.assetId),
      );
      expect(await page.locator('.state-error').count()).toBe(0);
    }));

  it('lists rows an earlier upload made as existing, with their links, when told the file was sent before; another item under a reused serial, and a row repeated in the file, stay failed', () =>
    inBrandPage(async (page) => {
      // What an earlier upload made before its tab was closed: two of the three rows.
      const made: Json[] = [];
      for (const serial of ['EXIST-1', 'EXIST-2']) {
        const answer = await api('POST', '/code/generate', {
          key: brand,
          body: { gtin, serialNumber: serial, batchNumber: 'L1' },
        });
        expect(answer.status, JSON.stringify(answer.body)).toBe(201);
        made.push(answer.body);
      }
      const csv = [
        'gtin,serial,batch',
        `${gtin},EXIST-1,L1`,
        `${gtin},EXIST-2,L9`,
        `${gtin},EXIST-3,L1`,
        `${gtin},EXIST-1,L1`,
      ].join('\n');
      await open(page, '/codes/batch');
      await page.getByLabel('CSV file').setInputFiles({ name: 'again.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      await page.getByText(/rows to generate/).waitFor();
      await page.getByRole('checkbox', { name: /This file was sent before/ }).check();
      await page.getByRole('button', { name: 'Generate codes' }).click();
      await page.getByText(/codes created/).waitFor({ timeout: 30_000 });
      expect(await textOf(page, '[aria-labelledby="batch-results-heading"]')).toMatch(
        /1 codes created, 1 made before \(an earlier upload of the same rows: listed as existing, with their links\), 2 rows failed/,
      );
      const results = await downloadResults(page);
      expect(results.rows.map((row) => [row.serial, row.status])).toEqual([
        ['EXIST-1', 'existing'],
        ['EXIST-2', 'failed'],
        ['EXIST-3', 'created'],
        ['EXIST-1', 'failed'],
      ]);
      expect([results.rows[0]?.url, results.rows[0]?.assetId]).toEqual([made[0]?.url, made[0]?.assetId]);
      expect(results.rows[1]?.error).toMatch(/DUPLICATE_SERIAL/);
      expect(await textOf(page, 'table.batch-errors')).toContain('EXIST-2');
    }));

  it('says a request that never got an answer may have made its codes, not that it made none', () =>
    inBrandPage(async (page) => {
      let tries = 0;
      await page.route('**/api/v1/code/generate/batch', async (route) => {
        tries += 1;
        await route.abort('connectionreset');
      });
      await generateFromCsv(page, 'unknown.csv', smallRowsCsv('UNKNOWN', 2));
      expect(tries).toBe(4);
      expect(await textOf(page, '.state-error')).toMatch(
        /Request 1 of 1 failed: .*\(NETWORK_ERROR\)\. It got no answer after 4 tries: its rows may have been generated/,
      );
      const results = await downloadResults(page);
      expect(results.rows.map((row) => row.status)).toEqual(['failed', 'failed']);
      for (const row of results.rows)
        expect(row.error).toMatch(/^Unknown: its request got no answer after 4 tries, and its codes may have been made/);
    }));
});

describe('a create whose answer is lost', () => {
  it('rotates a key once and still shows the new secret, which would otherwise be lost with the old key ending', () =>
    inBrandPage(async (page) => {
      // As on plain http:// at a private address, where browsers offer no crypto.randomUUID.
      await page.addInitScript(() => {
        delete (Object.getPrototypeOf(globalThis.crypto) as { randomUUID?: unknown }).randomUUID;
      });
      const sent = await loseAnswers(page, '**/api/v1/keys/*/rotate', 1);
      const { secret } = await rotateFromKeysPage(page, 'Dock scanner');
      // Sent again with the same key, and answered with what the first try made.
      expect(sent.map((attempt) => attempt.replayed)).toEqual([false, true]);
      expect(new Set(sent.map((attempt) => attempt.key)).size).toBe(1);
      expect(sent[0]?.key).toMatch(/^[0-9a-f-]{36}$/);
      expect(secret).toBe(sent[0]?.body.secret);
      expect((await api('GET', '/scans', { key: secret })).status).toBe(200);
      const keys = await api('GET', '/keys?limit=100', { key: brand });
      expect((keys.body.keys as Json[]).filter((key) => key.name === 'Dock scanner')).toHaveLength(2);
      expect(await page.locator('.state-error').count()).toBe(0);
    }));

  it('generates one code, shown as made, where a second click would have been refused as a duplicate serial', () =>
    inBrandPage(async (page) => {
      const sent = await loseAnswers(page, '**/api/v1/code/generate', 1);
      await open(page, '/codes/new');
      await page.getByLabel('GTIN').fill(gtin);
      await page.getByLabel('Serial number').fill('LOST-ONE');
      await page.getByRole('button', { name: 'Generate code', exact: true }).click();
      await page.getByText('Code generated:').waitFor();
      expect(sent.map((attempt) => attempt.replayed)).toEqual([false, true]);
      expect(await page.locator('.notice.success a.code').textContent()).toBe(sent[0]?.body.url);
      const listed = await api('GET', '/codes?serial=LOST-ONE', { key: brand });
      expect((listed.body.data as Json[]).map((code) => code.assetId)).toEqual([sent[0]?.body.assetId]);
    }));
});

describe('a list reloaded after a change', () => {
  it('keeps its rows on screen but inert until the new rows arrive, and tells screen readers it is updating', () =>
    inBrandPage(async (page) => {
      const made = await api('POST', '/keys', { key: brand, body: { name: 'Kiosk reader', scopes: ['assets:read'] } });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      await open(page, '/settings/keys');
      const row = page.locator('tr', { hasText: 'Kiosk reader' });
      const content = page.locator('.loaded-content', { has: row });
      // The list's next answer is held until the checks below are done.
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      await page.route(
        (url) => url.pathname === '/api/v1/keys',
        async (route) => {
          if (route.request().method() === 'GET') await held;
          await route.continue();
        },
      );
      await row.getByRole('button', { name: /Revoke/ }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
      await page.getByRole('status').filter({ hasText: 'Updating API keys…' }).waitFor();
      // The rows before the change, not "Loading…", and none of their buttons can be pressed.
      expect(await row.locator('.badge').textContent()).toBe('Active');
      expect(await content.evaluate((element) => (element as unknown as { inert: boolean }).inert)).toBe(true);
      expect(await page.locator('.state-loading:not(.visually-hidden)').count()).toBe(0);
      release();
      await row.locator('.badge', { hasText: 'Revoked' }).waitFor();
      expect(await content.evaluate((element) => (element as unknown as { inert: boolean }).inert)).toBe(false);
      expect(await page.getByRole('status').filter({ hasText: 'Updating' }).count()).toBe(0);
    }));
});

describe('the blocklist', () => {
  /** The verdict the API gives a link now (not counted with the overview's verifications). */
  const verdictOf = async (url: string) =>
    (await api('POST', '/code/verify', { key: brand, body: { url } })).body.verdict as string | undefined;
  const codeUrl = async (serialNumber: string) => {
    const made = await api('POST', '/code/generate', { key: brand, body: { gtin, serialNumber } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    return made.body.url as string;
  };

  it('blocks a code and a range of serials, verifications answering so at once; unblocks one, kept as removed; refuses a bad GTIN at its field', () =>
    inBrandPage(async (page) => {
      const single = await codeUrl('BL-1');
      const inRange = await codeUrl('BR-150');
      // Each code is verified twice at most: this product calls a third scan within minutes excessive.
      expect(await verdictOf(inRange)).toBe('AUTHENTIC');
      await open(page, '/blocklist');

      await page.getByLabel('GTIN').fill('12345678901234');
      await page.getByLabel('Serial', { exact: true }).fill('BL-1');
      await page.getByRole('button', { name: 'Block the code' }).click();
      await page.getByRole('dialog', { name: 'Block this code?' }).getByRole('button', { name: 'Block the code' }).click();
      await page.locator('#block-gtin-error').waitFor();
      expect(await textOf(page, '#block-gtin-error')).toMatch(/check digit/i);

      await page.getByLabel('GTIN').fill(gtin);
      await page.getByRole('button', { name: 'Block the code' }).click();
      const confirmOne = page.getByRole('dialog', { name: 'Block this code?' });
      expect(await confirmOne.textContent()).toContain(`${gtin} / BL-1`);
      await confirmOne.getByRole('button', { name: 'Block the code' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Blocked ${gtin} / BL-1.` })
        .waitFor();
      expect(await verdictOf(single)).toBe('COUNTERFEIT');

      await page.getByRole('radio', { name: /A range of serials/ }).check();
      await page.getByLabel('First serial').fill('BR-100');
      await page.getByLabel('Last serial').fill('BR-1999');
      await page.getByRole('button', { name: 'Block the range' }).click();
      await page.locator('#block-serial-to-error').waitFor();
      expect(await textOf(page, '#block-serial-to-error')).toContain('as many characters as the first');
      await page.getByLabel('Last serial').fill('BR-199');
      await page.getByRole('radio', { name: 'Suspicious (withdrawn)' }).check();
      await page.getByLabel('Reason (optional)').fill('Batch withdrawn: <b>recall</b> 2026-12');
      await page.getByRole('button', { name: 'Block the range' }).click();
      const confirmRange = page.getByRole('dialog', { name: 'Block this range of codes?' });
      expect(await confirmRange.textContent()).toContain(`${gtin} / BR-100 to BR-199`);
      expect(await confirmRange.textContent()).toContain('answers SUSPICIOUS');
      await confirmRange.getByRole('button', { name: 'Block the range' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Blocked ${gtin} / BR-100 to BR-199.` })
        .waitFor();
      await settled(page);
      expect(await verdictOf(inRange)).toBe('SUSPICIOUS');
      const rangeRow = page.locator('tr', { hasText: 'BR-100 to BR-199' });
      expect(await rangeRow.textContent()).toContain('Suspicious (withdrawn)');
      // A reason is text, never markup.
      expect(await rangeRow.locator('b').count()).toBe(0);
      expect(await rangeRow.textContent()).toContain('“Batch withdrawn: <b>recall</b> 2026-12”');

      // From one code's page, Unblock names the whole range its entry covers, and nothing happens before it is confirmed.
      const listed = await api('GET', '/codes?serial=BR-150', { key: brand });
      await open(page, `/codes/${encodeURIComponent(listed.body.data[0].assetId)}`);
      expect(await textOf(page, 'main')).toContain(`an entry for every code of ${gtin} / BR-100 to BR-199`);
      await page.getByRole('button', { name: 'Unblock' }).click();
      const wholeRange = page.getByRole('dialog', { name: 'Unblock the whole range?' });
      expect(await wholeRange.textContent()).toContain(`${gtin} / BR-100 to BR-199`);
      await wholeRange.getByRole('button', { name: 'Cancel' }).click();
      const stillBlocked = await api('GET', '/blocklist?status=active&limit=100', { key: brand });
      expect(stillBlocked.body.blocks.map((entry: Json) => entry.serialFrom)).toContain('BR-100');
      await open(page, '/blocklist');

      await page.getByRole('button', { name: `Unblock ${gtin} / BL-1` }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      expect(await seriousAxeIssues(page)).toEqual([]);
      await dialog.getByRole('button', { name: 'Unblock' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Unblocked ${gtin} / BL-1.` })
        .waitFor();
      await settled(page);
      // The Unblock button went with its entry: the focus is on the page's main region, not lost.
      await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe('main');
      const after = await api('POST', '/code/verify', { key: brand, body: { url: single } });
      expect(after.body.verdict, JSON.stringify(after.body)).toBe('AUTHENTIC');
      expect(await page.locator('tr', { hasText: `${gtin} / BL-1` }).count()).toBe(0);
      await open(page, '/blocklist?status=removed');
      expect(await textOf(page, 'main')).toMatch(new RegExp(`${gtin} / BL-1[\\s\\S]*Removed`));
      expect(await page.getByRole('button', { name: /^Unblock/ }).count()).toBe(0);
    }));

  it('shows a key with assets:read only the entries, no form and no Unblock, and says why', async () => {
    const made = await api('POST', '/keys', { key: brand, body: { name: 'Blocklist reader', scopes: ['assets:read'] } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const { context, page } = await newPage();
    try {
      await signIn(page, made.body.secret as string);
      await open(page, '/blocklist');
      expect(await textOf(page, 'main')).toContain('Blocking and unblocking is hidden');
      expect(await page.locator('tr', { hasText: 'BR-100 to BR-199' }).count()).toBe(1);
      expect(await page.getByRole('button', { name: /Unblock|Block the/ }).count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('gives a key that may generate but not read codes a way to the generate page', async () => {
    const made = await api('POST', '/keys', { key: brand, body: { name: 'Label printer', scopes: ['assets:create'] } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const { context, page } = await newPage();
    try {
      await signIn(page, made.body.secret as string);
      const nav = page.getByRole('navigation', { name: 'Console' });
      await nav.getByRole('link', { name: 'Generate codes' }).click();
      await page.getByRole('heading', { name: 'Generate a code', exact: true }).waitFor();
    } finally {
      await context.close();
    }
    // A key that reads codes starts from the Codes page: no second entry in its navigation.
    await inBrandPage(async (page) => {
      expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Generate codes' }).count()).toBe(
        0,
      );
    });
  });

  // Last of the blocklist's tests: it adds a page of entries, which would move the others' rows.
  it('keeps the focus on a status tab, and what the form holds, when the list changes status; a status shown again starts at its first page (the reports’ tabs too)', () =>
    inBrandPage(async (page) => {
      for (let serial = 1; serial <= 21; serial += 1) {
        const blocked = await api('POST', '/blocklist', {
          key: brand,
          body: { gtin, serial: `PAGE-${serial}`, kind: 'counterfeit' },
        });
        expect(blocked.status, JSON.stringify(blocked.body)).toBe(201);
      }
      await open(page, '/blocklist');
      const pager = page.getByRole('navigation', { name: /pages$/ });
      await pager.getByRole('button', { name: 'Next page' }).click();
      await pager.getByText('Page 2').waitFor();
      await page.getByLabel('GTIN').fill(gtin);
      await page.getByLabel('Serial', { exact: true }).fill('KEPT-1');
      const tabs = page.getByRole('navigation', { name: 'Blocklist entries by status' });
      await tabs.getByRole('link', { name: 'Removed' }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/status=removed/);
      await settled(page);
      expect(await tabs.getByRole('link', { name: 'Removed' }).getAttribute('aria-current')).toBe('page');
      expect(await page.evaluate('document.activeElement?.textContent')).toBe('Removed');
      expect([await page.getByLabel('GTIN').inputValue(), await page.getByLabel('Serial', { exact: true }).inputValue()]).toEqual(
        [gtin, 'KEPT-1'],
      );
      // The list is the removed entries' (the first test removed BL-1), not the active ones'.
      expect(await textOf(page, 'main')).toMatch(new RegExp(`${gtin} / BL-1[\\s\\S]*Removed`));
      // Back to the entries blocking now: their first page, not the second left before.
      await tabs.getByRole('link', { name: 'Blocking now' }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/status=active/);
      await settled(page);
      await pager.getByText('Page 1').waitFor();
      expect(await pager.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true);

      await open(page, '/reports');
      const reportTabs = page.getByRole('navigation', { name: 'Reports by status' });
      await reportTabs.getByRole('link', { name: 'All' }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/status=$/);
      await settled(page);
      expect(await page.evaluate('document.activeElement?.textContent')).toBe('All');
    }));
});

describe('the codes list', () => {
  it('starts another search at its first page, and shows the search reached by Back in its form', () =>
    inBrandPage(async (page) => {
      await open(page, '/codes');
      await page.getByLabel('GTIN').fill(gtin);
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL(/gtin=/);
      await settled(page);
      // The batch tests made more than a page of this GTIN's codes.
      const pager = page.getByRole('navigation', { name: 'Codes pages' });
      await pager.getByRole('button', { name: 'Next page' }).click();
      await pager.getByText('Page 2').waitFor();
      await settled(page);
      // Back to all codes: their first page, not the search's second page's cursor; the form empty again.
      await page.goBack();
      await page.waitForURL((url) => !url.search.includes('gtin='));
      await settled(page);
      expect(await pager.getByText('Page 1').count()).toBe(1);
      expect(await pager.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true);
      expect(await page.getByLabel('GTIN').inputValue()).toBe('');
    }));

  it('shows the page a code was opened from again on Back, not the list’s first page', () =>
    inBrandPage(async (page) => {
      await open(page, `/codes?gtin=${gtin}`);
      const pager = page.getByRole('navigation', { name: 'Codes pages' });
      await pager.getByRole('button', { name: 'Next page' }).click();
      await pager.getByText('Page 2').waitFor();
      await settled(page);
      const rows = await textOf(page, 'main table tbody');
      await page.locator('main table tbody a').first().click();
      await page.waitForURL(/\/codes\/code_/);
      await settled(page);
      await page.goBack();
      await page.waitForURL(/\/codes\?gtin=/);
      await pager.getByText('Page 2').waitFor();
      await settled(page);
      expect(await textOf(page, 'main table tbody')).toBe(rows);
    }));

  it('finds a code by its link pasted into the GTIN field', () =>
    inBrandPage(async (page) => {
      const code = await api('POST', '/code/generate', {
        key: brand,
        body: { gtin, serialNumber: 'PASTED/1', batchNumber: 'LOT-P' },
      });
      expect(code.status, JSON.stringify(code.body)).toBe(201);
      await open(page, '/codes');
      await page.getByLabel('GTIN').fill(code.body.url);
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL(/serial=PASTED/);
      await settled(page);
      expect([
        await page.getByLabel('GTIN').inputValue(),
        await page.getByLabel('Serial', { exact: true }).inputValue(),
        await page.getByLabel('Batch', { exact: true }).inputValue(),
      ]).toEqual([gtin, 'PASTED/1', 'LOT-P']);
      expect(await page.locator('main table tbody tr').count()).toBe(1);
      expect(await textOf(page, 'main table')).toContain('PASTED/1');

      // A search the form refuses (not a GTIN, not a link) shows no list: the code above is not its result.
      await page.getByLabel('GTIN').fill('not a gtin');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByText('A GTIN is 8 to 14 digits').waitFor();
      expect(await page.locator('main table').count()).toBe(0);
      expect(await textOf(page, 'section[aria-labelledby="codes-heading"]')).toContain('Correct the search above');
    }));
});

describe('usage', () => {
  it('shows each key’s requests against the limits the keys share: the daily quota, and the most the per-second limit allows a minute', async () => {
    const { context, page } = await newPage();
    try {
      await signIn(page, brand);
      await open(page, '/usage');
      const usage = (await api('GET', '/usage', { key: brand })).body;
      const perMinute = usage.rateLimit.limit * 60;
      const today = await textOf(page, 'section[aria-labelledby="quotas-heading"]');
      expect(today).toContain(
        `Rate limit: ${usage.rateLimit.limit.toLocaleString('en-GB')} requests a second for the account in the live environment, all its keys together: at most ${perMinute.toLocaleString('en-GB')} in a minute.`,
      );
      expect(today).toMatch(/there is no separate per-minute limit/);
      const perKey = await textOf(page, 'section[aria-labelledby="key-usage-heading"]');
      // Live has no daily request quota (enterprise: no generate or verify quota either).
      expect(perKey).toMatch(/The live environment has no daily request quota: today’s requests are only counted/);
      expect(perKey).toContain(
        `shown against ${perMinute.toLocaleString('en-GB')}: the most the rate limit of ${usage.rateLimit.limit.toLocaleString('en-GB')} a second lets through in a minute`,
      );
      const mine = page.locator('tr', { hasText: 'first key' });
      expect(await mine.locator('td[data-requests="minute"]').textContent()).toMatch(
        new RegExp(`^[\\d,]+ of ${perMinute.toLocaleString('en-GB')}$`),
      );
      expect(await mine.locator('td[data-requests="today"]').textContent()).toMatch(/^[\d,]+$/);

      // In test, today's requests are against the 100 a day the test keys share.
      await page.getByRole('radio', { name: 'Test' }).click();
      await page.getByText('Test environment: you are seeing test data only.').waitFor();
      await settled(page);
      expect(await textOf(page, 'section[aria-labelledby="key-usage-heading"]')).toMatch(
        /Today’s requests count toward the daily quota of 100 requests that all keys share/,
      );
      for (const cell of await page.locator('td[data-requests="today"]').allTextContents()) expect(cell).toMatch(/^\d+ of 100$/);
      await page.screenshot({ path: join(artifacts, 'usage-test-desktop.png'), fullPage: true });
      expect(await seriousAxeIssues(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('hides the keys’ requests from a key without keys:read, and says so', async () => {
    const made = await api('POST', '/keys', { key: brand, body: { name: 'Verifier only', scopes: ['assets:verify'] } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const { context, page, requests } = await newPage('phone');
    try {
      await signIn(page, made.body.secret);
      await open(page, '/usage');
      expect(await textOf(page, 'section[aria-labelledby="quotas-heading"]')).toMatch(/Rate limit:/);
      expect(await textOf(page, 'section[aria-labelledby="key-usage-heading"]')).toMatch(
        /The table of each key’s requests is hidden: the key you signed in with does not hold the keys:read scope/,
      );
      expect(await page.locator('table.key-usage').count()).toBe(0);
      // Not asked for at all (the API would refuse it: 403 INSUFFICIENT_SCOPE).
      expect(requests.filter((url) => url.includes('/api/v1/usage/keys'))).toEqual([]);
      await page.screenshot({ path: join(artifacts, 'usage-without-keys-read-phone.png'), fullPage: true });
      expect(await seriousAxeIssues(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('an account with 10,000 keys', () => {
  it('pages its keys and their usage from the server: 20 a page, the next page on request, never the whole list', async () => {
    const operator = t.product.generatedOperatorKey as string;
    const created = await api('POST', '/accounts', { key: operator, body: { name: 'Many Keys', tier: 'enterprise' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await t.product.db.query(
      `INSERT INTO api_keys (id, account_id, environment, name, key_hash, prefix, scopes, created_at)
       SELECT 'key_' || lpad(to_hex(i), 20, '0'), $1, 'live', 'bulk ' || i, 'seeded-many-' || i, 'svc_live_',
              ARRAY['assets:verify'], now() - make_interval(secs => i)
       FROM generate_series(1, 10000) AS i`,
      [created.body.account.id],
    );
    const { context, page, requests } = await newPage();
    try {
      await signIn(page, created.body.apiKey.secret);
      for (const [path, table, selector, api] of [
        ['/settings/keys', 'API keys', 'table.keys-table', '/api/v1/keys'],
        ['/usage', 'Key usage', 'table.key-usage', '/api/v1/usage/keys'],
      ] as const) {
        const before = requests.length;
        await open(page, path);
        const pager = page.getByRole('navigation', { name: `${table} pages` });
        await expect.poll(() => pager.getByText('Page 1').count()).toBe(1);
        const rows = page.locator(`${selector} tbody tr`);
        expect(await rows.count()).toBeLessThanOrEqual(20);
        const firstPage = await rows.allTextContents();
        // Every state the page goes through from the click on: the pager's label and the rows under it.
        // (As a string, like this file's other scripts: the test's TypeScript has no DOM types.)
        await page.evaluate(`(() => {
          const seen = [];
          window.pagerStates = seen;
          const look = () =>
            seen.push({
              label: document.querySelector(${JSON.stringify(`nav[aria-label="${table} pages"] span`)})?.textContent ?? null,
              rows: [...document.querySelectorAll(${JSON.stringify(`${selector} tbody tr`)})].map((row) => row.textContent ?? ''),
            });
          new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true });
        })()`);
        await pager.getByRole('button', { name: 'Next page' }).click();
        await expect.poll(() => pager.getByText('Page 2').count()).toBe(1);
        await settled(page);
        const secondPage = await rows.allTextContents();
        expect(secondPage.length).toBeGreaterThan(0);
        expect(secondPage.some((row) => firstPage.includes(row))).toBe(false);
        // Not even for a moment "Page 2" over page 1's rows (the new page is still loading then, and says so).
        const states = (await page.evaluate('window.pagerStates')) as Array<{ label: string | null; rows: string[] }>;
        expect(states.some((state) => state.label === 'Page 2')).toBe(true);
        expect(states.filter((state) => state.label === 'Page 2' && state.rows.some((row) => firstPage.includes(row)))).toEqual(
          [],
        );
        // Two pages asked for, each with a limit: the 10,000 keys never came to the browser at once.
        const asked = requests
          .slice(before)
          .filter(
            (url) => new URL(url).pathname === api && (api !== '/api/v1/keys' || new URL(url).searchParams.get('type') === 'api'),
          );
        expect(asked).toHaveLength(2);
        for (const url of asked) expect(Number(new URL(url).searchParams.get('limit'))).toBeLessThanOrEqual(50);
      }
    } finally {
      await context.close();
    }
  });
});
