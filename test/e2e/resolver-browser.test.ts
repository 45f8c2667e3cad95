// The resolver pages in real headless Chromium (Debian's, through playwright-core): visible texts at
// a phone viewport (390×844) and on desktop, an axe-core accessibility scan, and screenshots saved
// under test-artifacts/resolver/ (docs/RESOLVER.md).
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

const artifacts = join(process.cwd(), 'test-artifacts', 'resolver');
const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const viewports = {
  phone: { width: 390, height: 844 },
  desktop: { width: 1280, height: 900 },
} as const;

let t: TestProduct;
let browser: Browser;
let brand: string;
const links: Record<'authentic' | 'suspicious' | 'counterfeit' | 'auction', string> = {
  authentic: '',
  suspicious: '',
  counterfeit: '',
  auction: '',
};

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
const api = <T = Record<string, any>>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(t.url, method, `/api/v1${path}`, options);

async function photo(seed: number): Promise<Buffer> {
  const side = 256;
  const pixels = Buffer.alloc(side * side * 3, 170);
  let state = seed;
  for (let y = 40; y < 200; y += 1) {
    for (let x = 30 + seed * 5; x < 120 + seed * 20; x += 1) {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      pixels.fill(state % 255, (y * side + x) * 3, (y * side + x) * 3 + 3);
    }
  }
  return sharp(pixels, { raw: { width: side, height: side, channels: 3 } })
    .png()
    .toBuffer();
}

beforeAll(async () => {
  await mkdir(artifacts, { recursive: true });
  t = await startTestProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '1000' });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  const operator = t.product.generatedOperatorKey as string;
  const created = await api('POST', '/accounts', { key: operator, body: { name: 'Browser brand', tier: 'enterprise' } });
  brand = created.body.apiKey.secret;
  // The brand owns the GTIN it signs for (docs/SIGNING.md).
  await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { gtin: '09506000134352' } });
  const generate = async (serialNumber: string) =>
    (
      await api('POST', '/code/generate', {
        key: brand,
        body: {
          gtin: '09506000134352',
          serialNumber,
          batchNumber: 'LOT-2031',
          expiryDate: '2031-06-30',
          metadata: { name: 'Silver Pen Fountain 1904' },
        },
      })
    ).body.url as string;
  links.authentic = await generate('PEN-0001');
  links.suspicious = await generate('PEN-0002');
  // A report the brand confirms blocks the code: a genuine signature, a known counterfeit pattern.
  const report = await api('POST', '/code/report', { key: brand, body: { url: links.suspicious, reason: 'Odd hologram' } });
  await api('POST', `/code/reports/${report.body.reportId}/confirm`, { key: brand, body: { reason: 'Seen on a fake' } });
  const genuine = await generate('PEN-0003');
  links.counterfeit = genuine.replace(/sig=(.)/, (_, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);
  const object = (
    await api('POST', '/auction/objects/register', {
      key: brand,
      body: { title: 'Portrait of a Lady, 1887', category: 'painting' },
    })
  ).body;
  for (const [i, angle] of ['overall', 'detail_1', 'signature'].entries()) {
    const form = new FormData();
    form.append('angle', angle);
    form.append('photo', new Blob([await photo(i + 1)], { type: 'image/png' }), 'photo.png');
    await fetch(`${t.url}/api/v1/auction/objects/${object.object.id}/photos`, {
      method: 'POST',
      headers: { 'x-api-key': brand },
      body: form,
    });
  }
  links.auction = object.qr_data.gs1DigitalLink;
  // A reload is the same scan only while the epochs of what a verdict reads stand still, as the
  // gateway polls them (every 500 ms); the pages below open each link twice and expect one scan. So
  // the setup's changes are let settle first: the epochs unchanged for 1.5 s in the database, then
  // three of the gateway's polls. (Under CI's load, a change of the setup reached the gateway between
  // the phone and the desktop page of the authentic code twice on 2026-12-06, counting 2.)
  const epochs = async () => JSON.stringify(await t.product.db.query('SELECT name, value FROM cache_epochs ORDER BY name'));
  for (let last = await epochs(); ; ) {
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const now = await epochs();
    if (now === last) break;
    last = now;
  }
  await new Promise((resolve) => setTimeout(resolve, 1_500));
});

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

const pathOf = (url: string) => url.slice(new URL(url).origin.length);

/** Opens a resolver page as a shopper would: no JavaScript needed, every request recorded. */
async function open(
  kind: keyof typeof links,
  viewport: keyof typeof viewports,
): Promise<{ page: Page; requests: string[]; close(): Promise<void> }> {
  const context = await browser.newContext({ viewport: viewports[viewport], javaScriptEnabled: false, locale: 'en-GB' });
  const page = await context.newPage();
  const requests: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  const response = await page.goto(`${t.url}${pathOf(links[kind])}`);
  expect(response?.status()).toBe(200);
  await page.screenshot({ path: join(artifacts, `${kind}-${viewport}.png`), fullPage: true });
  return { page, requests, close: () => context.close() };
}

const expected: Record<keyof typeof links, RegExp[]> = {
  authentic: [
    /Authentic product/,
    /Silver Pen Fountain 1904/,
    /PEN-0001/,
    /LOT-2031/,
    /30 June 2031/,
    /Times scanned\s*1/,
    /UTC/,
    /The code is genuine/,
  ],
  suspicious: [
    /Suspicious: check before you use it/,
    /PEN-0002/,
    /known counterfeit pattern/,
    /The brand confirmed a report that this code is on counterfeit goods: Seen on a fake/,
    /Review it carefully/,
    /Report this product/,
  ],
  counterfeit: [/Counterfeit: do not use/, /signature does not match/, /Do not use or sell this product/, /Report this product/],
  auction: [
    /Registered object/,
    /Portrait of a Lady, 1887/,
    /painting/,
    /HM-/,
    /Private Collector/,
    /History intact/,
    /recorded events/,
  ],
};

describe('resolver pages in Chromium', () => {
  for (const kind of Object.keys(links) as Array<keyof typeof links>) {
    for (const viewport of Object.keys(viewports) as Array<keyof typeof viewports>) {
      it(`shows the ${kind} page at ${viewport} size, with no request to anyone else`, async () => {
        const { page, requests, close } = await open(kind, viewport);
        try {
          // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is the text a person sees, which is the point
          const text = await page.locator('body').innerText();
          for (const pattern of expected[kind]) expect(text).toMatch(pattern);
          expect(await page.locator('.verdict h1').isVisible()).toBe(true);
          expect(requests.every((url) => url.startsWith(t.url))).toBe(true);
          // Nothing wider than the screen: no sideways scrolling on a phone.
          const overflow = (await page.evaluate(
            'document.documentElement.scrollWidth - document.documentElement.clientWidth',
          )) as number;
          expect(overflow).toBeLessThanOrEqual(0);
        } finally {
          await close();
        }
      });
    }
  }

  it('has no serious or critical accessibility violations (axe-core, WCAG 2.2 AA)', async () => {
    for (const kind of Object.keys(links) as Array<keyof typeof links>) {
      // axe is injected as a script, which the page's own CSP rightly forbids: this context bypasses it.
      const context = await browser.newContext({ viewport: viewports.phone, bypassCSP: true });
      const page = await context.newPage();
      await page.goto(`${t.url}${pathOf(links[kind])}`);
      await page.addScriptTag({ content: axeSource });
      // Evaluated in the page, where axe is the global the injected script defined.
      const results = (await page.evaluate(
        `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } })`,
      )) as { violations: Array<{ id: string; impact: string; nodes: unknown[] }>; passes: unknown[] };
      const serious = results.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
      expect(serious, `${kind}: ${JSON.stringify(serious.map((violation) => violation.id))}`).toEqual([]);
      expect(results.passes.length).toBeGreaterThan(5);
      await context.close();
    }
  });

  it('sends the report form without JavaScript and thanks the shopper', async () => {
    // A report is filed for the brand whose code signed the link: the suspicious page's (a forged link's is not).
    const { page, close } = await open('suspicious', 'phone');
    try {
      await page.fill('#reason', 'The cap feels cheap');
      await Promise.all([page.waitForURL(`${t.url}/resolver/report`), page.click('button[type=submit]')]);
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is the text a person sees
      expect(await page.locator('body').innerText()).toMatch(/Thank you for your report/);
      await page.screenshot({ path: join(artifacts, 'report-sent-phone.png') });
    } finally {
      await close();
    }
  });

  it('on a phone, the printed link reaches the verdict in one redirect, counted once; link types redirect too', async () => {
    const fresh = (
      await api('POST', '/code/generate', {
        key: brand,
        body: {
          gtin: '09506000134352',
          serialNumber: 'PEN-0100',
          batchNumber: 'LOT-2031',
          metadata: { name: 'Silver Pen Fountain 1904' },
        },
      })
    ).body.url as string;
    const created = await api('POST', '/links', {
      key: brand,
      body: {
        gtin: '09506000134352',
        linkType: 'gs1:pip',
        href: `${t.url}/.well-known/gs1resolver?from=pip`,
        title: 'About',
        type: 'application/json',
      },
    });
    expect(created.status).toBe(201);
    const context = await browser.newContext({ viewport: viewports.phone, javaScriptEnabled: false, locale: 'en-GB' });
    try {
      const page = await context.newPage();
      const response = await page.goto(`${t.url}${pathOf(fresh)}`);
      expect(response?.status()).toBe(200);
      // One redirect: the printed link → the verification page, the signature passed on.
      const first = response?.request().redirectedFrom();
      expect(first?.url()).toBe(`${t.url}${pathOf(fresh)}`);
      expect(first?.redirectedFrom()).toBeNull();
      expect(page.url()).toBe(`${t.url}/verify${pathOf(fresh)}`);
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is the text a person sees
      expect(await page.locator('body').innerText()).toMatch(/Times scanned\s*1/);
      await page.screenshot({ path: join(artifacts, 'redirected-phone.png'), fullPage: true });
      await page.reload();
      // biome-ignore lint/performance/useDomNodeTextContent: as above
      expect(await page.locator('body').innerText()).toMatch(/Times scanned\s*1/);

      const pip = await page.goto(`${t.url}${pathOf(fresh)}&linkType=gs1:pip`);
      expect(pip?.status()).toBe(200);
      expect(page.url()).toBe(`${t.url}/.well-known/gs1resolver?from=pip&${new URL(fresh).search.slice(1)}`);

      const missing = await page.goto(`${t.url}${pathOf(fresh)}&linkType=gs1:recipeInfo`);
      expect(missing?.status()).toBe(404);
      // biome-ignore lint/performance/useDomNodeTextContent: as above
      expect(await page.locator('body').innerText()).toMatch(/gs1:verificationService/);
      const overflow = (await page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      )) as number;
      expect(overflow).toBeLessThanOrEqual(0);
    } finally {
      await context.close();
      await api('DELETE', `/links/${created.body.id}`, { key: brand });
    }
  });
});
