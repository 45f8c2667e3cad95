// The web console (apps/console, docs/CONSOLE.md) in real headless Chromium (Debian's, through
// playwright-core), against the embedded product over HTTP: sign-in with an API key, a key created,
// its secret shown once, used and revoked; a batch from a CSV with its results downloaded; the
// overview's counts after real verifications; the environment switch; sign-out; a revoked key's
// session ending; axe-core on every page; screenshots of every page at phone and desktop size
// under test-artifacts/console/.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  if (existsSync(join(process.cwd(), 'apps/console/dist/index.html'))) return;
  const built = spawnSync(process.execPath, ['apps/console/scripts/build-console.mjs'], { stdio: 'inherit' });
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
  t = await startTestProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '1000' });
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
    await expect(page.getByRole('heading', { name: 'Sign in to the console' }).isVisible()).resolves.toBe(true);
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
  });

  it('shows on the overview the verdicts the API answered: authentic, tampered (counterfeit) and over-scanned (suspicious)', async () => {
    const { page } = main;
    await open(page, '/');
    for (const period of ['Last 24 hours', 'Last 7 days', 'Last 30 days']) {
      const row = page.locator(`tr[data-period="${period}"]`);
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

  it('rotates a key: a new secret shown once, the old key ending now', async () => {
    const { page } = main;
    const old = await api('POST', '/keys', { key: brand, body: { name: 'Line scanner', scopes: ['assets:read'] } });
    expect(old.status, JSON.stringify(old.body)).toBe(201);
    await open(page, '/settings/keys');
    await page
      .locator('tr', { hasText: 'Line scanner' })
      .getByRole('button', { name: /Rotate/ })
      .click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('radio', { name: 'Now' }).check();
    await dialog.getByRole('button', { name: 'Rotate key' }).click();
    const secret = await page.locator('#new-secret').inputValue();
    expect(secret).toMatch(/^svc_live_/);
    expect(secret).not.toBe(old.body.secret);
    expect(await textOf(page, '.secret-panel')).toMatch(/The old key stops working at/);
    expect((await api('GET', '/scans', { key: secret })).status).toBe(200);
    await expect.poll(async () => (await api('GET', '/scans', { key: old.body.secret })).status).toBe(401);
    await page.getByRole('button', { name: 'I have stored it' }).click();
  });

  it('generates a batch from a CSV: progress, errors by line, and the results as a CSV with links', async () => {
    const { page } = main;
    await open(page, '/codes/batch');
    const csv = [
      'gtin,serial,batch,name',
      `${gtin},CSV-001,LOT-9,Blue pen`,
      `${gtin},CSV-002,LOT-9,Red pen`,
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
    // The links in the download are real codes: each verifies as authentic.
    const link = created[0]!.split(',')[6]!;
    expect((await verify(link)).verdict).toBe('AUTHENTIC');
  });

  it('switches between live and test without mixing their data', async () => {
    const { page } = main;
    await open(page, '/');
    await page.getByRole('radio', { name: 'Test' }).click();
    await page.getByText('Test environment: you are seeing test data only.').waitFor();
    await settled(page);
    const testRow = page.locator('tr[data-period="Last 30 days"]');
    for (const verdict of ['AUTHENTIC', 'SUSPICIOUS', 'COUNTERFEIT']) {
      expect(await testRow.locator(`td[data-verdict="${verdict}"]`).textContent()).toBe('0');
    }
    await page.getByRole('radio', { name: 'Live' }).click();
    await page.getByText('Test environment').waitFor({ state: 'detached' });
    await settled(page);
    expect(await page.locator('tr[data-period="Last 30 days"] td[data-verdict="AUTHENTIC"]').textContent()).toBe(
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
    await page.getByLabel('Serial').focus();
    await page.keyboard.type('PEN-A1');
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'PEN-A1' }).waitFor();
    await page.getByRole('link', { name: 'PEN-A1' }).focus();
    await page.keyboard.press('Enter');
    await settled(page);
    expect(await textOf(page, 'main h1')).toMatch(/PEN-A1/);
    expect(page.url()).toContain(encodeURIComponent(codeAssetId));
  });

  it('shows a code: its QR image, a PNG at print size, and blocks and unblocks it (issue #21)', async () => {
    const { page } = main;
    await open(page, `/codes/${encodeURIComponent(codeAssetId)}`);
    const link = await page.locator('[aria-labelledby="link-heading"] a.code').getAttribute('href');
    expect(link).toContain('/21/PEN-A1');
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

    await page.getByLabel('Reason (optional)').fill('Seen on fakes in a market');
    await page.getByRole('button', { name: 'Block code' }).click();
    await page.getByRole('heading', { name: 'Blocked' }).waitFor();
    const blocked = await verify(link!);
    expect(blocked.verdict).toBe('COUNTERFEIT');
    expect(blocked.blocked?.reason).toBe('Seen on fakes in a market');
    await page.getByRole('button', { name: 'Unblock' }).click();
    await page.getByRole('heading', { name: 'Block this code' }).waitFor();
    const unblocked = await verify(link!);
    expect(unblocked.verdict).not.toBe('COUNTERFEIT');
    expect(unblocked.blocked).toBeUndefined();
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
  ];
}

describe('a session whose key is revoked', () => {
  it('ends: the next call answers 401 and the console shows sign-in with why', async () => {
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
      await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor({ timeout: 5_000 });
      expect(await textOf(page)).toMatch(/Your session ended/);
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
