// The brand on the resolver page (docs/RESOLVER.md, "The brand"; issue #18, item 5): name, logo and
// colours set by API and shown to a shopper from this origin only; hostile logos refused; colours
// kept legible; the page names only the GTIN's owner as issuer and calls an auction object
// photo-bound only when every required angle is. One embedded product for the file, real HTTP, and
// one headless Chromium look at a phone-sized screen.
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { chromium } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { picture } from '../support/pictures.ts';

const artifacts = join(process.cwd(), 'test-artifacts', 'resolver');
const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let t: TestProduct;
let operator: string;
let brand: string;
let brandAccountId: string;
let brandReadOnly: string;
let other: string;
const gtin = '09506000134352';
const otherGtin = '09506000134369';
const unownedGtin = '09506000134376';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
const api = <T = Record<string, any>>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(t.url, method, `/api/v1${path}`, options);
const pathOf = (url: string) => url.slice(new URL(url).origin.length);

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
  expect(typeof response.body.error?.message).toBe('string');
  expect((response.body as { meta?: { requestId?: string } }).meta?.requestId).toEqual(expect.any(String));
}

/** PUT /account/branding/logo with these bytes and Content-Type. */
async function putLogo(key: string, bytes: Buffer | string, contentType: string): Promise<ApiResponse> {
  const response = await fetch(`${t.url}/api/v1/account/branding/logo`, {
    method: 'PUT',
    headers: { 'x-api-key': key, 'content-type': contentType },
    body: bytes,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : {} };
}

let serial = 0;
async function generate(key: string, forGtin = gtin): Promise<string> {
  serial += 1;
  const created = await api('POST', '/code/generate', {
    key,
    body: { gtin: forGtin, serialNumber: `BRAND-${serial}`, metadata: { name: 'Ceramic Teapot' } },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.url as string;
}

const page = async (link: string) => {
  const response = await fetch(`${t.url}${pathOf(link)}`);
  expect(response.status).toBe(200);
  return { html: await response.text(), headers: response.headers };
};

/** What the browser-side functions use of the page's globals (the test is typed without the DOM library). */
interface Browser {
  getComputedStyle(node: unknown): { backgroundColor: string; color: string };
  document: { documentElement: { scrollWidth: number } };
}

/** A PNG with one extra chunk before IDAT (CRCs right, so only our checks can tell). */
function withChunk(png: Buffer, type: string, data: string): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), Buffer.from(data, 'latin1')]);
  const chunk = Buffer.alloc(body.length + 8);
  chunk.writeUInt32BE(data.length, 0);
  body.copy(chunk, 4);
  chunk.writeUInt32BE(crc32(body), body.length + 4);
  const afterHeader = 8 + 25; // signature, then IHDR (13 bytes of data + 12)
  return Buffer.concat([png.subarray(0, afterHeader), chunk, png.subarray(afterHeader)]);
}

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '1000' });
  operator = t.product.generatedOperatorKey as string;
  const created = await api('POST', '/accounts', { key: operator, body: { name: 'Acme Ceramics Ltd', tier: 'enterprise' } });
  brand = created.body.apiKey.secret;
  brandAccountId = created.body.account.id;
  await api('POST', `/accounts/${brandAccountId}/gtins`, { key: operator, body: { gtin } });
  const readOnly = await api('POST', '/keys', { key: brand, body: { name: 'reader', scopes: ['assets:read', 'assets:create'] } });
  brandReadOnly = readOnly.body.secret;
  const second = await api('POST', '/accounts', { key: operator, body: { name: 'Other Tenant', tier: 'enterprise' } });
  other = second.body.apiKey.secret;
  await api('POST', `/accounts/${second.body.account.id}/gtins`, { key: operator, body: { gtin: otherGtin } });
});

afterAll(async () => {
  await t?.stop();
});

describe('branding by API', () => {
  it('starts unset, takes a name and a colour, picks legible text, and records each change in the account’s stream', async () => {
    const before = await api('GET', '/account/branding', { key: brandReadOnly });
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ displayName: null, shownName: 'Acme Ceramics Ltd', primaryColor: null, logo: null });

    const set = await api('PUT', '/account/branding', { key: brand, body: { displayName: 'Acme', primaryColor: '#0B3D91' } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ displayName: 'Acme', shownName: 'Acme', primaryColor: '#0b3d91', textColor: '#ffffff' });
    expect(set.body.contrastRatio).toBeGreaterThanOrEqual(4.5);
    // Fields left out keep their value.
    const renamed = await api('PUT', '/account/branding', { key: brand, body: {} });
    expect(renamed.body).toMatchObject({ displayName: 'Acme', primaryColor: '#0b3d91' });

    const events = await t.product.db.query<{ event_type: string; data: Record<string, unknown> }>(
      'SELECT event_type, data FROM event_log WHERE stream_id = $1 ORDER BY stream_version',
      [`account-${brandAccountId}-live`],
    );
    const branding = events.filter((event) => event.event_type.startsWith('branding.'));
    expect(branding.map((event) => event.event_type)).toEqual(['branding.updated', 'branding.updated']);
    expect(branding[0]?.data).toMatchObject({ displayName: 'Acme', primaryColor: '#0b3d91', accountId: brandAccountId });
  });

  it('needs scope * to change, a key to read, and changes only the calling key’s own account', async () => {
    expectError(
      await api('PUT', '/account/branding', { key: brandReadOnly, body: { displayName: 'Hijacked' } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    expectError(await api('PUT', '/account/branding', { body: { displayName: 'Hijacked' } }), 401, 'MISSING_API_KEY');
    expectError(await putLogo(brandReadOnly, await picture(1, { format: 'png' }), 'image/png'), 403, 'INSUFFICIENT_SCOPE');
    // Nothing in the request names an account: another tenant's change is its own.
    const theirs = await api('PUT', '/account/branding', { key: other, body: { displayName: 'Acme', primaryColor: '#ff0000' } });
    expect(theirs.status).toBe(200);
    expectError(
      await api('PUT', '/account/branding', { key: other, body: { accountId: brandAccountId } }),
      400,
      'VALIDATION_ERROR',
    );
    const ours = await api('GET', '/account/branding', { key: brand });
    expect(ours.body).toMatchObject({ displayName: 'Acme', primaryColor: '#0b3d91' });
    // The other tenant's codes carry its own branding, not ours, and ours not its.
    const { html } = await page(await generate(other, otherGtin));
    expect(html).toContain('href="/resolver/themes/ff0000-000000.css"');
    expect(html).not.toContain('0b3d91');
  });

  it('refuses colours that are not #rrggbb, names with direction overrides, and text that is not legible on the band', async () => {
    expectError(await api('PUT', '/account/branding', { key: brand, body: { primaryColor: 'red' } }), 400, 'VALIDATION_ERROR');
    expectError(await api('PUT', '/account/branding', { key: brand, body: { primaryColor: '#0b3d9' } }), 400, 'VALIDATION_ERROR');
    // Every character that changes text direction, U+061C (the Arabic letter mark) included.
    for (const displayName of ['Acme\u202Eevil', 'Acme\u061Cevil', 'Acme\u2067evil', 'Acme\u200Fevil']) {
      expectError(await api('PUT', '/account/branding', { key: brand, body: { displayName } }), 400, 'VALIDATION_ERROR');
    }
    const grey = await api('PUT', '/account/branding', { key: brand, body: { primaryColor: '#777777', textColor: '#888888' } });
    expectError(grey, 400, 'VALIDATION_ERROR');
    expect(grey.body.error?.details).toMatchObject({ minimum: 4.5, contrastRatio: expect.any(Number) });
    expect(grey.body.error?.details?.contrastRatio as number).toBeLessThan(4.5);
    // White text set earlier does not survive a move to a pale band unchecked: the pair is checked as it will be.
    await api('PUT', '/account/branding', { key: brand, body: { textColor: '#ffffff' } });
    expectError(
      await api('PUT', '/account/branding', { key: brand, body: { primaryColor: '#ffff00' } }),
      400,
      'VALIDATION_ERROR',
    );
    // Without a text colour the band gets black or white, whichever contrasts more.
    const yellow = await api('PUT', '/account/branding', { key: brand, body: { primaryColor: '#ffff00', textColor: null } });
    expect(yellow.body).toMatchObject({ primaryColor: '#ffff00', textColor: '#000000' });
    expect(yellow.body.contrastRatio).toBeGreaterThanOrEqual(4.5);
    // A stylesheet for an illegible pair does not exist, whatever a link asks for.
    expect((await fetch(`${t.url}/resolver/themes/777777-888888.css`)).status).toBe(404);
    const legible = await fetch(`${t.url}/resolver/themes/ffff00-000000.css`);
    expect(legible.status).toBe(200);
    expect(legible.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await legible.text()).toContain('background:#ffff00;color:#000000');
    const restored = await api('PUT', '/account/branding', { key: brand, body: { primaryColor: '#0b3d91', textColor: null } });
    expect(restored.body).toMatchObject({ primaryColor: '#0b3d91', textColor: '#ffffff' });
  });
});

describe('the logo', () => {
  it('is decoded, stored re-encoded as a small PNG, and served from this origin with nosniff', async () => {
    const uploaded = await putLogo(brand, await picture(3, { side: 600, format: 'jpeg' }), 'image/jpeg');
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
    const logo = uploaded.body.logo as { url: string; sha256: string; width: number; height: number };
    expect(logo.url).toBe(`/resolver/logos/${logo.sha256}.png`);
    expect(Math.max(logo.width, logo.height)).toBe(256);
    const served = await fetch(`${t.url}${logo.url}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    expect(served.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    const bytes = Buffer.from(await served.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(logo.sha256);
    expect(await sharp(bytes).metadata()).toMatchObject({ format: 'png', width: logo.width, height: logo.height });
    expect((await fetch(`${t.url}/resolver/logos/${'0'.repeat(64)}.png`)).status).toBe(404);
    expect((await fetch(`${t.url}/resolver/logos/${'0'.repeat(63)}.png`)).status).toBe(400);
    const events = await t.product.db.query<{ data: Record<string, unknown> }>(
      `SELECT data FROM event_log WHERE stream_id = $1 AND event_type = 'branding.logo-set'`,
      [`account-${brandAccountId}-live`],
    );
    expect(events.map((event) => event.data.sha256)).toEqual([logo.sha256]);
  });

  it('refuses hostile uploads with the error envelope: SVG, polyglots, markup in metadata, wrong or missing types, oversize', async () => {
    const png = await picture(4, { side: 120, format: 'png' });
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>';
    expectError(await putLogo(brand, svg, 'image/svg+xml'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(await putLogo(brand, svg, 'image/png'), 400, 'VALIDATION_ERROR');
    expectError(
      await putLogo(brand, Buffer.concat([png, Buffer.from('<html><script>alert(1)</script></html>')]), 'image/png'),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await putLogo(brand, withChunk(png, 'tEXt', 'Comment\u0000<script>alert(1)</script>'), 'image/png'),
      400,
      'VALIDATION_ERROR',
    );
    const jpeg = await picture(5, { side: 120, format: 'jpeg' });
    expectError(
      await putLogo(brand, Buffer.concat([jpeg, Buffer.from('PK\u0003\u0004 a zip after the image')]), 'image/jpeg'),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await putLogo(brand, jpeg, 'image/png'), 400, 'VALIDATION_ERROR');
    expectError(await putLogo(brand, png, 'image/jpeg'), 400, 'VALIDATION_ERROR');
    expectError(await putLogo(brand, png, 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(await putLogo(brand, png, 'application/octet-stream'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(await putLogo(brand, Buffer.alloc(0), 'image/png'), 400, 'VALIDATION_ERROR');
    expectError(await putLogo(brand, png.subarray(0, png.length - 20), 'image/png'), 400, 'VALIDATION_ERROR');
    const huge = await sharp({ create: { width: 3000, height: 20, channels: 3, background: '#336699' } })
      .png()
      .toBuffer();
    expectError(await putLogo(brand, huge, 'image/png'), 400, 'VALIDATION_ERROR');
    const noisy = await sharp(Buffer.from(Array.from({ length: 700 * 700 * 3 }, (_, i) => (i * 7919) % 251)), {
      raw: { width: 700, height: 700, channels: 3 },
    })
      .png({ compressionLevel: 0 })
      .toBuffer();
    expect(noisy.length).toBeGreaterThan(524_288);
    expectError(await putLogo(brand, noisy, 'image/png'), 413, 'PAYLOAD_TOO_LARGE');
    // None of them replaced the logo set before.
    const now = await api('GET', '/account/branding', { key: brand });
    expect(now.body.logo?.width).toBe(256);
  });
});

describe('the page a shopper sees', () => {
  it('shows the brand’s name, logo and colours from this origin only, and names the GTIN’s owner as issuer', async () => {
    const branding = (await api('GET', '/account/branding', { key: brand })).body;
    const { html, headers } = await page(await generate(brand));
    expect(html).toContain('Authentic product');
    // Where it vouches for the issuer, the page names the account as the operator registered it
    // beside a display name that differs (the display name is the brand's own words).
    expect(html).toContain(
      'This code was issued by Acme (registered as Acme Ceramics Ltd), who owns its GTIN, and its signature checks out.',
    );
    expect(html).toMatch(/<dt>Issued by<\/dt><dd>Acme \(registered as Acme Ceramics Ltd\)<\/dd>/);
    expect(html).toContain(`<img src="/resolver/logos/${branding.logo.sha256}.png"`);
    expect(html).toContain('alt="Acme logo"');
    expect(html).toContain('<link rel="stylesheet" href="/resolver/themes/0b3d91-ffffff.css">');
    // Every URL on the page is this origin's; the CSP lets nothing else in.
    expect(html).not.toMatch(/(src|href|action)="(?!\/)/);
    const csp = headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/^default-src 'none'; style-src 'self' 'sha256-[^']+'; img-src 'self'; /);
    expect(csp).not.toMatch(/https?:|\*/);
  });

  it('never vouches for another brand’s name chosen as a display name: the registered account is named beside it', async () => {
    // Found by an audit (2026-12-07): a tenant whose display name was another tenant's name had its
    // own genuine codes read "issued by <that name>, who owns its GTIN".
    await api('PUT', '/account/branding', { key: other, body: { displayName: 'Acme Ceramics Ltd' } });
    try {
      const { html } = await page(await generate(other, otherGtin));
      expect(html).toContain(
        'This code was issued by Acme Ceramics Ltd (registered as Other Tenant), who owns its GTIN, and its signature checks out.',
      );
      expect(html).toMatch(/<dt>Issued by<\/dt><dd>Acme Ceramics Ltd \(registered as Other Tenant\)<\/dd>/);
      expect(html).not.toContain('issued by Acme Ceramics Ltd, who owns');
      // The band at the top names it so too (a review of 2026-12-07 found it showing the display name alone).
      expect(html).toContain('Issued by<strong>Acme Ceramics Ltd (registered as Other Tenant)</strong>');
      expect(html).not.toMatch(/<strong>Acme Ceramics Ltd<\/strong>/);
      // And a display name cannot write the words itself.
      const imitated = await api('PUT', '/account/branding', {
        key: other,
        body: { displayName: 'Acme Ceramics Ltd (Registered  as Acme Ceramics Ltd)' },
      });
      expectError(imitated, 400, 'VALIDATION_ERROR');
    } finally {
      await api('PUT', '/account/branding', { key: other, body: { displayName: 'Acme', primaryColor: '#ff0000' } });
    }
  });

  it('names no brand for a code the operator signed because nobody owns its GTIN, and none as issuer of a forgery', async () => {
    await api('PUT', '/account/branding', { key: operator, body: { displayName: 'Operator Inc' } });
    const operatorCode = await page(await generate(operator, unownedGtin));
    expect(operatorCode.html).toContain('no brand has registered its GTIN here');
    expect(operatorCode.html).toMatch(/<dt>Issued by<\/dt><dd>No brand \(signed by the service operator\)<\/dd>/);
    expect(operatorCode.html).not.toContain('Operator Inc');
    expect(operatorCode.html).not.toContain('class="brand"');

    const genuine = await generate(brand);
    const forged = genuine.replace(/sig=(.)/, (_, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);
    const { html } = await page(forged);
    expect(html).toContain('Counterfeit: do not use');
    expect(html).not.toContain('Issued by');
    expect(html).not.toContain('issued by Acme');
    expect(html).toContain('GTIN registered to<strong>Acme (registered as Acme Ceramics Ltd)</strong>');
  });

  it('calls an auction object photo-bound only when every required angle has a photo', async () => {
    const registered = await api('POST', '/auction/objects/register', {
      key: brand,
      body: { title: 'Tea bowl, Edo period', category: 'bottle' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const objectId = registered.body.object.id as string;
    const link = registered.body.qr_data.gs1DigitalLink as string;
    const angles = ['front_label', 'closure', 'back_label', 'fill_level'];
    const upload = async (angle: string, seed: number) => {
      const form = new FormData();
      form.append('angle', angle);
      form.append('photo', new Blob([await picture(seed, { format: 'png' })], { type: 'image/png' }), 'photo.png');
      const response = await fetch(`${t.url}/api/v1/auction/objects/${objectId}/photos`, {
        method: 'POST',
        headers: { 'x-api-key': brand },
        body: form,
      });
      expect(response.status, await response.clone().text()).toBe(201);
    };
    await upload('front_label', 11);
    await upload('closure', 12);
    const partial = await page(link);
    expect(partial.html).toContain('Reference photos: 2 of 4 angles; not photo-bound until every required angle has one.');
    expect(partial.html).not.toMatch(/Photo-bound:|Standard: photo-bound|fully photo-bound/);
    const publicView = await api('GET', `/auction/public/verify/${registered.body.qr_data.serial}`);
    expect(publicView.body.cryptographic_identity.reference_photos).toEqual({ bound: 2, required: 4 });
    expect(publicView.body.security.tier_label).toBe('Standard: reference photos at 2 of 4 angles');

    await upload(angles[2] as string, 13);
    await upload(angles[3] as string, 14);
    const complete = await page(link);
    expect(complete.html).toContain('Photo-bound: a reference photo at each of the 4 required angles.');
  });

  it('renders the brand on a phone-sized screen in Chromium, loading nothing from anywhere else', async () => {
    const link = await generate(brand);
    await mkdir(artifacts, { recursive: true });
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    try {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false });
      const tab = await context.newPage();
      const requests: string[] = [];
      const failed: string[] = [];
      tab.on('request', (request) => requests.push(request.url()));
      tab.on('requestfailed', (request) => failed.push(request.url()));
      tab.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) failed.push(message.text());
      });
      expect((await tab.goto(`${t.url}${pathOf(link)}`))?.status()).toBe(200);
      await tab.waitForLoadState('load');
      const band = tab.locator('.brand');
      await expect
        .poll(() => band.evaluate((node) => (globalThis as unknown as Browser).getComputedStyle(node).backgroundColor))
        .toBe('rgb(11, 61, 145)');
      expect(await band.evaluate((node) => (globalThis as unknown as Browser).getComputedStyle(node).color)).toBe(
        'rgb(255, 255, 255)',
      );
      const logo = tab.locator('.brand img');
      expect(await logo.evaluate((node) => (node as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0);
      const box = await logo.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
      expect(
        await tab.evaluate(() => (globalThis as unknown as Browser).document.documentElement.scrollWidth),
      ).toBeLessThanOrEqual(390);
      expect(await tab.getByText('Issued by').first().isVisible()).toBe(true);
      expect(failed).toEqual([]);
      expect(requests.every((url) => url.startsWith(t.url))).toBe(true);
      expect(requests.some((url) => url.includes('/resolver/logos/'))).toBe(true);
      expect(requests.some((url) => url.includes('/resolver/themes/'))).toBe(true);
      await tab.screenshot({ path: join(artifacts, 'branded-phone.png'), fullPage: true });
      await context.close();
      // axe-core on the branded page (as resolver-browser.test.ts does: its script needs the CSP bypassed).
      const scan = await browser.newContext({ viewport: { width: 390, height: 844 }, bypassCSP: true });
      const scanned = await scan.newPage();
      await scanned.goto(`${t.url}${pathOf(link)}`);
      await scanned.addScriptTag({ content: axeSource });
      const results = (await scanned.evaluate(
        `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } })`,
      )) as { violations: Array<{ id: string; impact: string }>; passes: unknown[] };
      const serious = results.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
      expect(serious.map((violation) => violation.id)).toEqual([]);
      expect(results.passes.length).toBeGreaterThan(5);
      await scan.close();
    } finally {
      await browser.close();
    }
  });

  it('drops the logo on DELETE: the page shows the name alone and the old logo URL is gone', async () => {
    const before = (await api('GET', '/account/branding', { key: brand })).body;
    expectError(await api('DELETE', '/account/branding/logo', { key: brandReadOnly }), 403, 'INSUFFICIENT_SCOPE');
    const removed = await api('DELETE', '/account/branding/logo', { key: brand });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ displayName: 'Acme', logo: null });
    expect((await fetch(`${t.url}${before.logo.url}`)).status).toBe(404);
    const { html } = await page(await generate(brand));
    expect(html).toContain('Issued by<strong>Acme (registered as Acme Ceramics Ltd)</strong>');
    expect(html).not.toContain('<img');
    expect((await api('DELETE', '/account/branding/logo', { key: brand })).status).toBe(200);
    const events = await t.product.db.query<{ event_type: string }>(
      `SELECT event_type FROM event_log WHERE stream_id = $1 AND event_type = 'branding.logo-removed'`,
      [`account-${brandAccountId}-live`],
    );
    expect(events).toHaveLength(1);
  });
});
