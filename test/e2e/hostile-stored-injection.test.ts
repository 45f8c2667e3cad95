// Stored injection from low-privilege writers into pages others view (a review of 2026-12-04), in
// real headless Chromium over real HTTP against the embedded product. The writers: a narrow key of the brand
// (`assets:create` only, as an intern's leaked key; `keys:write` + `keys:read` without `*`), another
// tenant (its own key, `assets:verify` on the brand's codes), and a shopper on the public resolver
// page. What they write: code metadata (values and field names), serial and batch numbers, key
// names, webhook endpoint URLs and descriptions, blocklist reasons, reporters' words, a report's
// decision reason, auction object titles and owner ids, link targets. Who views it: the brand's
// admin in the console (a `*` key's session), and shoppers on the resolver's pages.
//
// Every page is checked for script execution (a `window.__pwned` flag, a JavaScript dialog, a
// request to a listener of this test on 127.0.0.1), for markup that changes what the viewer sees
// or clicks (planted elements, `javascript:` or other-origin links), for CSS taking effect, and the
// planted text must be on screen as text (so a check is never vacuous). The CSP of both surfaces is
// checked as headers and in the browser (markup planted in the DOM directly must run and load
// nothing). CSV downloads are checked for formula cells. Found and fixed (both failed before): a
// blocklist reason and a webhook URL holding U+202E reordered the console's own sentences around
// them; the console isolates what others wrote (components/quoted.tsx, `.code`, format.ts isolated)
// and webhook URLs with control or direction characters are refused (printableHttpUrlPattern).
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const gtin = '09506000134352';

let t: TestProduct;
let browser: Browser;
let beacon: Server;
let beaconPort = 0;
/** Every request the beacon listener got: any one means planted markup reached out. */
const beaconHits: string[] = [];
let sink: Server;
let sinkPort = 0;
let admin = '';
let creator = '';
let keyWriter = '';
let otherTenant = '';
/** The origin the product writes into its links (HALLMARK_PUBLIC_URL's default). */
let publicOrigin = '';

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

/** Markup a writer plants: every way it could run, load, restyle or add something to click. */
const payload = (tag: string) =>
  `"'><img src=//127.0.0.1:${beaconPort}/${tag} onerror=window.__pwned='${tag}'><script>window.__pwned='${tag}-script'</script>` +
  `<a id=evil-link href=javascript:window.__pwned='${tag}-href'>Open</a><button id=evil-button>Confirm all</button>` +
  `<style>main{display:none}</style><iframe src=//127.0.0.1:${beaconPort}/${tag}-frame></iframe>`;
/** The same within 100 characters (key names). */
const shortPayload = (tag: string) =>
  `<img src=//127.0.0.1:${beaconPort}/${tag} onerror=__pwned=1><a id=evil-link href=javascript:__pwned=2>x</a>`;
/** GS1 character set 82 within 20 characters: a serial or a batch number. */
const serialPayload = `"'><b/id=sx>S</b>`;
const batchPayload = `<i/id=bx>B</i>`;

/** Ran in the page: what planted markup did, if anything, and the text on screen. */
const probe = () => `(() => {
  const all = (selector) => [...document.querySelectorAll(selector)];
  const planted = all('#evil-link, #evil-button, #sx, #bx, body iframe, body script, body style, body link, ' +
    'img[src*=":${beaconPort}"], [onerror], [onload], [onclick], a[href^="javascript:" i], body meta, base')
    .map((element) => element.outerHTML.slice(0, 160));
  const main = document.querySelector('main');
  return {
    pwned: window.__pwned === undefined ? null : String(window.__pwned),
    planted,
    links: all('a[href]').map((a) => a.href),
    mainShown: main ? getComputedStyle(main).display !== 'none' : true,
    text: document.body.innerText,
  };
})()`;

interface Probe {
  pwned: string | null;
  planted: string[];
  links: string[];
  mainShown: boolean;
  text: string;
}

interface Viewer {
  context: BrowserContext;
  page: Page;
  requests: string[];
  dialogs: string[];
  /** How many beacon hits there were when the viewer opened. */
  beaconFrom: number;
}

async function newViewer(): Promise<Viewer> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-GB', acceptDownloads: true });
  const page = await context.newPage();
  const requests: string[] = [];
  const dialogs: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  // A JavaScript dialog (alert, confirm) is script running: recorded, dismissed.
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss().catch(() => undefined);
  });
  return { context, page, requests, dialogs, beaconFrom: beaconHits.length };
}

async function signedInViewer(apiKey = admin): Promise<Viewer> {
  const viewer = await newViewer();
  await viewer.page.goto(`${t.url}/console/`);
  await viewer.page.getByLabel('API key').fill(apiKey);
  await viewer.page.getByRole('button', { name: 'Sign in' }).click();
  await viewer.page.getByRole('button', { name: 'Sign out' }).waitFor();
  return viewer;
}

async function settled(page: Page): Promise<void> {
  await page.locator('main h1').first().waitFor({ timeout: 15_000 });
  await expect.poll(() => page.locator('.state-loading').count(), { timeout: 15_000 }).toBe(0);
}

async function openConsole(viewer: Viewer, path: string): Promise<void> {
  const response = await viewer.page.goto(`${t.url}/console${path}`);
  expect(response?.status()).toBe(200);
  await settled(viewer.page);
}

/**
 * What a careful viewer expects of a page showing others' text: nothing ran (no flag, no dialog, no
 * request to the beacon), nothing planted is an element, no link leads off the product or into
 * `javascript:`, the page's CSS stands, and `shown` is on screen as the very text written.
 */
async function expectInert(viewer: Viewer, where: string, shown: string[]): Promise<Probe> {
  // Time for an image's error, a frame's load or a stylesheet to have happened, had they been allowed.
  await viewer.page.waitForTimeout(300);
  const seen = (await viewer.page.evaluate(probe())) as Probe;
  const own = [new URL(t.url).origin, publicOrigin];
  expect.soft(seen.pwned, `${where}: script ran`).toBeNull();
  expect.soft(viewer.dialogs, `${where}: a JavaScript dialog opened`).toEqual([]);
  expect.soft(seen.planted, `${where}: planted markup became elements`).toEqual([]);
  expect
    .soft(
      seen.links.filter((href) => !own.some((origin) => href.startsWith(`${origin}/`))),
      `${where}: links off the product (or javascript:)`,
    )
    .toEqual([]);
  expect.soft(seen.mainShown, `${where}: planted CSS hid the page`).toBe(true);
  expect
    .soft(
      viewer.requests.filter((url) => url.includes(`:${beaconPort}`)),
      `${where}: the page asked the beacon`,
    )
    .toEqual([]);
  expect.soft(beaconHits.slice(viewer.beaconFrom), `${where}: the beacon was reached`).toEqual([]);
  for (const text of shown) expect.soft(seen.text, `${where}: written text not shown as text`).toContain(text);
  return seen;
}

function ensureConsoleBuilt(): void {
  const built = spawnSync(process.execPath, ['apps/console/scripts/build-console.mjs', '--if-stale'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('the console did not build');
}

async function newKey(owner: string, name: string, scopes: string[]): Promise<{ id: string; secret: string }> {
  const created = await api('POST', '/keys', { key: owner, body: { name, scopes, environment: 'live' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.id, secret: created.body.secret };
}

async function generate(key: string, body: Json): Promise<Json> {
  const answer = await api('POST', '/code/generate', { key, body: { gtin, ...body } });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

const pathOf = (url: string) => url.slice(new URL(url).origin.length);

beforeAll(async () => {
  ensureConsoleBuilt();
  beacon = createServer((request, response) => {
    beaconHits.push(`${request.method} ${request.url}`);
    response.writeHead(204).end();
  });
  await new Promise<void>((resolve) => beacon.listen(0, '127.0.0.1', resolve));
  beaconPort = (beacon.address() as AddressInfo).port;
  // Where the webhook endpoints point: never asked (loopback is refused at delivery), never the beacon.
  sink = createServer((_request, response) => response.writeHead(204).end());
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  sinkPort = (sink.address() as AddressInfo).port;

  t = await startTestProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '1000' });
  if ((await fetch(`${t.url}/console`)).status === 503) ensureConsoleBuilt();
  const operator = t.product.generatedOperatorKey as string;
  const brand = await api('POST', '/accounts', { key: operator, body: { name: 'Review Brand', tier: 'enterprise' } });
  expect(brand.status, JSON.stringify(brand.body)).toBe(201);
  admin = brand.body.apiKey.secret;
  const granted = await api('POST', `/accounts/${brand.body.account.id}/gtins`, { key: operator, body: { gtin } });
  expect(granted.status, JSON.stringify(granted.body)).toBeLessThan(300);
  const other = await api('POST', '/accounts', { key: operator, body: { name: 'Other Tenant', tier: 'enterprise' } });
  expect(other.status, JSON.stringify(other.body)).toBe(201);
  otherTenant = other.body.apiKey.secret;
  creator = (await newKey(admin, 'Intern (codes only)', ['assets:create'])).secret;
  keyWriter = (await newKey(admin, 'Key manager (no *)', ['keys:write', 'keys:read'])).secret;
  const probeCode = await generate(admin, { serialNumber: 'ORIGIN-1' });
  publicOrigin = new URL(probeCode.url).origin;

  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await new Promise((resolve) => beacon?.close(resolve));
  await new Promise((resolve) => sink?.close(resolve));
});

describe('the console shows low-privilege writers’ text as text', () => {
  it('code metadata (values and field names), serial and batch written by an assets:create key', async () => {
    const metadata = { name: payload('meta-name'), [shortPayload('mf')]: 'value', nested: { html: payload('meta-nested') } };
    const code = await generate(creator, { serialNumber: serialPayload, batchNumber: batchPayload, metadata });
    const viewer = await signedInViewer();
    try {
      await openConsole(viewer, `/codes?gtin=${gtin}`);
      await expectInert(viewer, 'codes list', [serialPayload]);
      await openConsole(viewer, `/codes/${encodeURIComponent(code.assetId)}`);
      await expectInert(viewer, 'code page', [serialPayload, batchPayload, metadata.name, shortPayload('mf')]);
    } finally {
      await viewer.context.close();
    }
  });

  it('key names written by a keys:write key (no *), in the list and the revoke dialog', async () => {
    const name = shortPayload('kn');
    const planted = await newKey(keyWriter, name, ['keys:read']);
    const viewer = await signedInViewer();
    try {
      await openConsole(viewer, '/settings/keys');
      await expectInert(viewer, 'keys list', [name]);
      await viewer.page
        .locator(`tr[data-key-id="${planted.id}"]`)
        .getByRole('button', { name: /^Revoke/ })
        .click();
      await viewer.page.locator('dialog[open]').waitFor();
      await expectInert(viewer, 'revoke dialog', [`Revoke ${name}?`]);
      await viewer.page.keyboard.press('Escape');
    } finally {
      await viewer.context.close();
    }
  });

  it('webhook endpoint URLs and descriptions written by a keys:write key are text, never links', async () => {
    const url = `http://127.0.0.1:${sinkPort}/hook?x="><img src=//127.0.0.1:${beaconPort}/hook-url onerror=__pwned=1><a id=evil-link href=javascript:__pwned=2>x</a>`;
    const description = payload('hook-description').slice(0, 500);
    const created = await api('POST', '/webhooks/endpoints', {
      key: keyWriter,
      body: { url, description, eventTypes: ['key.expiring'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const viewer = await signedInViewer();
    try {
      await openConsole(viewer, '/settings/webhooks');
      const row = viewer.page.locator(`tr[data-endpoint="${created.body.id}"]`);
      await row.waitFor();
      await expectInert(viewer, 'webhooks list', [created.body.url, description]);
      // The URL is never an anchor the admin could click.
      expect(await viewer.page.locator('main a[href*="/hook"]').count()).toBe(0);
      await row.getByRole('button', { name: /^Messages/ }).click();
      await viewer.page.locator('#messages-heading').waitFor();
      await expectInert(viewer, 'webhook messages', [created.body.url]);
      await row.getByRole('button', { name: /^Delete/ }).click();
      await viewer.page.locator('dialog[open]').waitFor();
      await expectInert(viewer, 'webhook delete dialog', [created.body.url]);
      await viewer.page.keyboard.press('Escape');
    } finally {
      await viewer.context.close();
    }
  });

  it('blocklist reasons written by an assets:create key: the blocklist, the code page, the unblock dialog', async () => {
    const code = await generate(admin, { serialNumber: 'BLOCK-R1' });
    const reason = payload('block-reason');
    const blocked = await api('POST', '/blocklist', {
      key: creator,
      body: { gtin, serial: 'BLOCK-R1', kind: 'counterfeit', reason },
    });
    expect(blocked.status, JSON.stringify(blocked.body)).toBe(201);
    const viewer = await signedInViewer();
    try {
      await openConsole(viewer, '/blocklist');
      await expectInert(viewer, 'blocklist', [reason]);
      await viewer.page
        .locator('tr', { hasText: 'BLOCK-R1' })
        .getByRole('button', { name: /Unblock/ })
        .click();
      await viewer.page.locator('dialog[open]').waitFor();
      await expectInert(viewer, 'unblock dialog', [reason]);
      await viewer.page.keyboard.press('Escape');
      await openConsole(viewer, `/codes/${encodeURIComponent(code.assetId)}`);
      await expectInert(viewer, 'blocked code page', [reason]);
    } finally {
      await viewer.context.close();
    }
  });

  it('reporters’ words, from another tenant by API and from a shopper on the public page: overview, reports, decide dialog', async () => {
    const code = await generate(admin, { serialNumber: 'REPORTED-1' });
    // Another tenant's key reports the brand's code.
    const byTenant = payload('tenant-report');
    const filed = await api('POST', '/code/report', { key: otherTenant, body: { url: code.url, reason: byTenant } });
    expect(filed.status, JSON.stringify(filed.body)).toBe(201);
    // A shopper on the public page: the code withdrawn (suspicious) shows the report form.
    const withdrawn = await generate(admin, { serialNumber: 'REPORTED-2' });
    const block = await api('POST', '/blocklist', { key: admin, body: { gtin, serial: 'REPORTED-2', kind: 'withdrawn' } });
    expect(block.status, JSON.stringify(block.body)).toBe(201);
    const byShopper = payload('shopper-report');
    const shopper = await newViewer();
    try {
      const page = await shopper.page.goto(`${t.url}/verify${pathOf(withdrawn.url)}`);
      expect(page?.status()).toBe(200);
      await shopper.page.fill('#reason', byShopper);
      await Promise.all([shopper.page.waitForURL(`${t.url}/resolver/report`), shopper.page.click('button[type=submit]')]);
      // biome-ignore lint/performance/useDomNodeTextContent: the text a person sees
      expect(await shopper.page.locator('body').innerText()).toMatch(/Thank you for your report/);
    } finally {
      await shopper.context.close();
    }

    const viewer = await signedInViewer();
    try {
      await openConsole(viewer, '/');
      await viewer.page.getByText('Reported codes waiting for review').waitFor();
      await expectInert(viewer, 'overview', [byTenant, byShopper]);
      await openConsole(viewer, '/reports');
      await expectInert(viewer, 'reports', [byTenant, byShopper]);
      await viewer.page
        .locator(`tr[data-report="${filed.body.reportId}"]`)
        .getByRole('button', { name: /^Dismiss/ })
        .click();
      await viewer.page.locator('dialog[open]').waitFor();
      await expectInert(viewer, 'decide dialog', [byTenant]);
      await viewer.page.keyboard.press('Escape');
    } finally {
      await viewer.context.close();
    }
  });

  it('another tenant’s forged scans (serial and batch of its choosing) on the overview', async () => {
    const genuine = await generate(admin, { serialNumber: 'SCANNED-1' });
    // The brand's GTIN with a made-up serial and batch, under a signature that does not verify.
    const printed = new URL(genuine.url);
    const forged = `${printed.origin}/01/${gtin}/10/${encodeURIComponent(batchPayload)}/21/${encodeURIComponent(serialPayload)}${printed.search}`;
    const verified = await api('POST', '/code/verify', { key: otherTenant, body: { url: forged } });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    expect(verified.body.verdict).toBe('COUNTERFEIT');
    const viewer = await signedInViewer();
    try {
      await openConsole(viewer, '/');
      await viewer.page.getByText('Recent counterfeit scans').waitFor();
      await expectInert(viewer, 'overview scans', [serialPayload]);
    } finally {
      await viewer.context.close();
    }
  });

  it('a blocklist reason written by an assets:create key cannot reorder the console’s own words (bidi controls)', async () => {
    // Names and webhook descriptions refuse U+202A–U+202E and U+2066–U+2069 ("would reorder what a
    // page ... shows", packages/contracts/src/schemas/common.ts); a blocklist reason takes them.
    const code = await generate(admin, { serialNumber: 'BIDI-1' });
    const blocked = await api('POST', '/blocklist', {
      key: creator,
      body: { gtin, serial: 'BIDI-1', kind: 'counterfeit', reason: '\u202Eok' },
    });
    // Refusing the reason as names are refused would hold as well.
    if (blocked.status === 400) return;
    expect(blocked.status, JSON.stringify(blocked.body)).toBe(201);
    const viewer = await signedInViewer();
    try {
      await openConsole(viewer, `/codes/${encodeURIComponent(code.assetId)}`);
      // Found (fixed); what it was: the reason's U+202E (RIGHT-TO-LEFT OVERRIDE) is not isolated, so the
      // console's own sentence after it in the same paragraph ("Unblocking keeps the block in the
      // record as removed.") is drawn right to left: a narrow key's text rewrites the admin's page.
      await expectLeftToRight(viewer.page, 'main', 'Unblocking keeps');
    } finally {
      await viewer.context.close();
    }
  });

  it('a webhook URL written by a keys:write key cannot reorder the console’s own words (bidi controls)', async () => {
    // Found (fixed): the URL's schema checked only its start (`^https?://`) and the endpoint stored
    // it as written (services/compliance-service/src/webhooks/endpoints.ts): its path could hold
    // U+202E, which the description, shown beside it, may not.
    // Refused now (printableHttpUrlPattern), as tabs and line breaks a URL parser would drop are.
    for (const url of [`http://127.0.0.1:${sinkPort}/in/\u202Eok`, `http://127.0.0.1:${sinkPort}/in/\tok`]) {
      const refused = await api('POST', '/webhooks/endpoints', { key: keyWriter, body: { url, eventTypes: ['key.expiring'] } });
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.error?.code).toBe('VALIDATION_ERROR');
    }
    // One stored before that rule: the console isolates it.
    const created = await api('POST', '/webhooks/endpoints', {
      key: keyWriter,
      body: { url: `http://127.0.0.1:${sinkPort}/in/ok`, eventTypes: ['key.expiring'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await t.product.db.query('UPDATE webhook_endpoints SET url = $2 WHERE endpoint_id = $1', [
      created.body.id,
      `http://127.0.0.1:${sinkPort}/in/\u202Eok`,
    ]);
    const viewer = await signedInViewer();
    try {
      await openConsole(viewer, '/settings/webhooks');
      await viewer.page
        .locator(`tr[data-endpoint="${created.body.id}"]`)
        .getByRole('button', { name: /^Delete/ })
        .click();
      await viewer.page.locator('dialog[open]').waitFor();
      // Found (fixed); what it was: "… gets nothing more, and its messages and their attempts are
      // deleted with it. This cannot be undone." is drawn right to left after the URL's U+202E.
      await expectLeftToRight(viewer.page, 'dialog[open]', 'gets nothing more');
      await viewer.page.keyboard.press('Escape');
    } finally {
      await viewer.context.close();
    }
  });
});

/**
 * The first two characters of `phrase` (console text, within `scope`) are drawn left to right, as
 * English is: a bidi control in text written by someone else before it did not take it over.
 */
async function expectLeftToRight(page: Page, scope: string, phrase: string): Promise<void> {
  const order = (await page.evaluate(`(() => {
    const walker = document.createTreeWalker(document.querySelector(${JSON.stringify(scope)}), NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = node.data.indexOf(${JSON.stringify(phrase)});
      if (at < 0) continue;
      const box = (from) => { const range = document.createRange(); range.setStart(node, from); range.setEnd(node, from + 1); return range.getBoundingClientRect(); };
      const first = box(at), second = box(at + 1);
      return { first: first.left, second: second.left, sameLine: Math.abs(first.top - second.top) < 2 };
    }
    return null;
  })()`)) as { first: number; second: number; sameLine: boolean } | null;
  expect(order, `"${phrase}" is on the page`).not.toBeNull();
  expect(order?.sameLine).toBe(true);
  expect(order?.first, `"${phrase}" is drawn right to left`).toBeLessThan(order?.second ?? Number.NEGATIVE_INFINITY);
}

describe('the resolver shows writers’ text to shoppers as text', () => {
  it('product name, serial and batch written by an assets:create key', async () => {
    const name = payload('product-name');
    const code = await generate(creator, {
      serialNumber: `${serialPayload}2`,
      batchNumber: batchPayload,
      metadata: { name },
    });
    const shopper = await newViewer();
    try {
      const response = await shopper.page.goto(`${t.url}/verify${pathOf(code.url)}`);
      expect(response?.status()).toBe(200);
      await expectInert(shopper, 'resolver code page', [name, `${serialPayload}2`, batchPayload]);
    } finally {
      await shopper.context.close();
    }
  });

  it('a report decision’s reason (an assets:create key may confirm) and the blocklist reason it must not show', async () => {
    const code = await generate(admin, { serialNumber: 'CONFIRMED-1' });
    const report = await api('POST', '/code/report', { key: otherTenant, body: { url: code.url, reason: 'fake?' } });
    expect(report.status, JSON.stringify(report.body)).toBe(201);
    const decision = payload('decision-reason');
    const confirmed = await api('POST', `/code/reports/${report.body.reportId}/confirm`, {
      key: creator,
      body: { reason: decision },
    });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    const privateReason = 'PRIVATE-BLOCK-NOTE <b id=sx>x</b>';
    const other = await generate(admin, { serialNumber: 'PRIVATE-1' });
    await api('POST', '/blocklist', {
      key: creator,
      body: { gtin, serial: 'PRIVATE-1', kind: 'withdrawn', reason: privateReason },
    });
    const shopper = await newViewer();
    try {
      await shopper.page.goto(`${t.url}/verify${pathOf(code.url)}`);
      await expectInert(shopper, 'resolver confirmed page', [decision]);
      await shopper.page.goto(`${t.url}/verify${pathOf(other.url)}`);
      const seen = await expectInert(shopper, 'resolver withdrawn page', []);
      // A block's reason is the brand's note: the public page says the code is blocked, not why.
      expect(seen.text).not.toContain('PRIVATE-BLOCK-NOTE');
    } finally {
      await shopper.context.close();
    }
  });

  it('an auction object’s title and owner written by an assets:create key', async () => {
    const title = payload('object-title').slice(0, 300);
    const ownerId = `<b id=sx>owner</b><a id=evil-link href=javascript:__pwned=1>o</a>`;
    const registered = await api('POST', '/auction/objects/register', {
      key: creator,
      body: { title, category: 'watch', ownerId },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const shopper = await newViewer();
    try {
      const response = await shopper.page.goto(`${t.url}/verify${pathOf(registered.body.qr_data.gs1DigitalLink)}`);
      expect(response?.status()).toBe(200);
      // The owner id is not published (the page says "Private Collector"); its markup is checked all the same.
      const seen = await expectInert(shopper, 'resolver auction page', [title]);
      expect(seen.text).not.toContain('owner</b>');
    } finally {
      await shopper.context.close();
    }
  });
});

describe('dangerous URLs are refused where they are written', () => {
  it('link targets: javascript:, data:, vbscript: and credentials refused for an assets:create key', async () => {
    for (const href of [
      'javascript:alert(document.domain)//https://example.com/',
      ' JavaScript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:msgbox(1)',
      'https://user:pass@example.com/',
    ]) {
      const answer = await api('POST', '/links', {
        key: creator,
        body: { gtin, linkType: 'gs1:pip', href, title: 'Product page', type: 'text/html' },
      });
      expect(answer.status, `${href}: ${JSON.stringify(answer.body)}`).toBe(400);
    }
  });

  it('webhook endpoint URLs: only http(s), for a keys:write key', async () => {
    for (const url of ['javascript:alert(1)//http://x', 'data:text/html,<script>alert(1)</script>', 'file:///etc/passwd']) {
      const answer = await api('POST', '/webhooks/endpoints', { key: keyWriter, body: { url, eventTypes: ['key.expiring'] } });
      expect(answer.status, `${url}: ${JSON.stringify(answer.body)}`).toBe(400);
    }
  });
});

/** The directives of a CSP header, each with its sources. */
function directives(csp: string | null): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const part of (csp ?? '').split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) map.set(name.toLowerCase(), sources);
  }
  return map;
}

const unsafeSources = [
  "'unsafe-inline'",
  "'unsafe-eval'",
  "'unsafe-hashes'",
  "'wasm-unsafe-eval'",
  '*',
  'data:',
  'blob:',
  'http:',
  'https:',
];

describe('the CSP would stop an injection that got through', () => {
  it('the console’s and the resolver’s CSP headers allow nothing inline and nothing from elsewhere', async () => {
    const code = await generate(admin, { serialNumber: 'CSP-1' });
    for (const path of ['/console/', '/console/codes/anything', '/console/settings/webhooks']) {
      const response = await fetch(`${t.url}${path}`);
      expect(response.status).toBe(200);
      const csp = directives(response.headers.get('content-security-policy'));
      const scripts = csp.get('script-src') ?? csp.get('default-src') ?? ['*'];
      const styles = csp.get('style-src') ?? csp.get('default-src') ?? ['*'];
      for (const source of unsafeSources) {
        expect(scripts, `${path} script-src`).not.toContain(source);
        expect(styles, `${path} style-src`).not.toContain(source);
      }
      expect(csp.get('object-src')).toEqual(["'none'"]);
      expect(csp.get('base-uri')).toEqual(["'none'"]);
      expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
      expect(csp.get('form-action')).toEqual(["'self'"]);
      // The page itself has no inline script, handler or style for the policy to have to allow.
      const html = await response.text();
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/i);
      expect(html).not.toMatch(/\son[a-z]+\s*=/i);
      expect(html).not.toMatch(/<style|\sstyle\s*=/i);
    }
    for (const path of [`/verify${pathOf(code.url)}`, '/verify/01/09506000134352/21/x?sig=AAAA', '/resolver/report']) {
      const response = await fetch(`${t.url}${path}`, { method: path === '/resolver/report' ? 'POST' : 'GET' });
      expect(response.headers.get('content-type') ?? '', path).toMatch(/^text\/html/);
      const csp = directives(response.headers.get('content-security-policy'));
      expect(csp.get('default-src'), path).toEqual(["'none'"]);
      expect(csp.has('script-src'), path).toBe(false);
      expect(csp.get('img-src'), path).toEqual(["'self'"]);
      expect(csp.get('base-uri'), path).toEqual(["'none'"]);
      expect(csp.get('form-action'), path).toEqual(["'self'"]);
      expect(csp.get('frame-ancestors'), path).toEqual(["'none'"]);
      for (const source of csp.get('style-src') ?? []) expect(source, path).toMatch(/^('self'|'sha256-[A-Za-z0-9+/=]+')$/);
    }
  });

  /** Plants markup straight into the page's DOM (as a missed escape would) and reports what it did. */
  const plant = (tag: string) => `(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (event) => window.__violations.push(event.effectiveDirective));
    const host = document.querySelector('main') ?? document.body;
    host.insertAdjacentHTML('beforeend', ${JSON.stringify(payload(tag))} +
      '<div id="styled" style="position:fixed;inset:0;background:red">Pay here</div>' +
      '<link rel="stylesheet" href="//127.0.0.1:${beaconPort}/${tag}.css">');
    const script = document.createElement('script');
    script.textContent = "window.__pwned = '${tag}-inline'";
    document.body.append(script);
  })()`;

  for (const surface of ['console', 'resolver'] as const) {
    it(`markup planted in the ${surface}’s page runs nothing, loads nothing from elsewhere and restyles nothing`, async () => {
      const code = await generate(admin, { serialNumber: `PLANT-${surface}` });
      const viewer = surface === 'console' ? await signedInViewer() : await newViewer();
      try {
        if (surface === 'console') await openConsole(viewer, `/codes/${encodeURIComponent(code.assetId)}`);
        else expect((await viewer.page.goto(`${t.url}/verify${pathOf(code.url)}`))?.status()).toBe(200);
        const hitsBefore = beaconHits.length;
        await viewer.page.evaluate(plant(surface));
        // The planted javascript: link, clicked.
        await viewer.page.locator('#evil-link').dispatchEvent('click');
        await viewer.page.waitForTimeout(500);
        const after = (await viewer.page.evaluate(`({
          pwned: window.__pwned === undefined ? null : String(window.__pwned),
          violations: window.__violations,
          position: getComputedStyle(document.getElementById('styled')).position,
          mainShown: getComputedStyle(document.querySelector('main')).display !== 'none',
        })`)) as { pwned: string | null; violations: string[]; position: string; mainShown: boolean };
        expect(after.pwned).toBeNull();
        expect(viewer.dialogs).toEqual([]);
        expect(beaconHits.slice(hitsBefore)).toEqual([]);
        expect(after.position, 'an inline style attribute applied').not.toBe('fixed');
        expect(after.mainShown, 'a planted <style> applied').toBe(true);
        // The policy did the refusing (it was not that nothing was tried).
        expect(after.violations).toEqual(expect.arrayContaining(['script-src-elem', 'img-src']));
      } finally {
        await viewer.context.close();
      }
    });
  }
});

describe('CSV downloads hold no formula cells', () => {
  const formulaStart = /^[=+\-@\t\r]/;

  /** The fields of one CSV line (RFC 4180 quoting). */
  function csvFields(line: string): string[] {
    const fields: string[] = [];
    let field = '';
    let quoted = false;
    for (let index = 0; index < line.length; index += 1) {
      const character = line[index] as string;
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

  it('the batch results the console downloads, for a CSV someone else prepared', async () => {
    const viewer = await signedInViewer();
    try {
      await openConsole(viewer, '/codes/batch');
      const csv = [
        'gtin,serial,batch,name',
        `${gtin},=1+2,+3-4,=1+1`,
        `${gtin},@SUM(1),-5+6,Pen`,
        `=1+1,F-1,LOT,Pen`,
        `${gtin},-7,@A1,Pen`,
        `${gtin},+8,-9,Pen`,
      ].join('\n');
      await viewer.page
        .getByLabel('CSV file')
        .setInputFiles({ name: 'from-intern.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      await viewer.page.getByRole('button', { name: 'Generate codes' }).click();
      await viewer.page.getByText(/codes created/).waitFor();
      const [download] = await Promise.all([
        viewer.page.waitForEvent('download'),
        viewer.page.getByRole('link', { name: /Download results/ }).click(),
      ]);
      const lines = (await readFile(await download.path(), 'utf8')).trim().split(/\r?\n/);
      expect(lines.length).toBe(6);
      const cells = lines.slice(1).flatMap(csvFields);
      expect(cells.filter((cell) => formulaStart.test(cell))).toEqual([]);
      // The values are there, neutralised, not dropped.
      expect(cells).toEqual(expect.arrayContaining(["'=1+2", "'+3-4", "'@SUM(1)", "'+8", "'-9"]));
    } finally {
      await viewer.context.close();
    }
  });

  it('the scans CSV: another tenant’s forged scans with formula serials and batches', async () => {
    const genuine = await generate(admin, { serialNumber: 'CSV-SCAN-1' });
    const printed = new URL(genuine.url);
    for (const [batch, serial] of [
      ['=1+2', '+SUM(1)'],
      ['+5', '-3+4'],
    ] as const) {
      const forged = `${printed.origin}/01/${gtin}/10/${encodeURIComponent(batch)}/21/${encodeURIComponent(serial)}${printed.search}`;
      const verified = await api('POST', '/code/verify', { key: otherTenant, body: { url: forged } });
      expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    }
    const response = await fetch(`${t.url}/api/v1/scans?format=csv&gtin=${gtin}`, { headers: { 'x-api-key': admin } });
    expect(response.status).toBe(200);
    const lines = (await response.text()).trim().split(/\r?\n/);
    const cells = lines.slice(1).flatMap(csvFields);
    expect(cells).toEqual(expect.arrayContaining(["'+SUM(1)", "'=1+2", "'+5", "'-3+4"]));
    expect(cells.filter((cell) => formulaStart.test(cell))).toEqual([]);
  });
});
