// An auction object's label, scanned, is judged as any code is (a review of 2026-12-03, confirmed
// over HTTP): the brand put the label on its blocklist as counterfeit, `POST /code/verify` said
// COUNTERFEIT and the scan was recorded COUNTERFEIT, yet the resolver's page said "Authentic
// product" and its JSON `status: "authentic"` (the page was built from the object's own record
// only, and the handler then went on to verify the link a second time). Now the page and its JSON
// carry the scan's verdict where it is worse than the object's. Over real HTTP, in both forms.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchFrom, newClientAddress } from '../support/client-address.ts';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call, startEmbeddedProduct } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let product: RunningProduct;

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(product.url, method, `/api/v1${path}`, options);

/** The scanned label as a phone opens it (following the redirect to its verification page), from an address of its own. */
async function scanLabel(label: string, accept: 'text/html' | 'application/json') {
  const printed = new URL(label);
  const response = await fetchFrom(newClientAddress(), `${product.url}${printed.pathname}${printed.search}`, {
    headers: { accept },
    follow: true,
  });
  expect(response.status, response.text.slice(0, 300)).toBe(200);
  return response.text;
}

const headlineOf = (html: string) => /<h1[^>]*>([^<]*)<\/h1>/.exec(html)?.[1];

describe.each([
  ['embedded', startEmbeddedProduct],
  ['distributed', () => startDistributedProduct()],
])('an auction object label scanned (%s form)', (_form, start: () => Promise<RunningProduct>) => {
  let house: string;

  beforeAll(async () => {
    product = await start();
    const created = await api('POST', '/accounts', { key: product.operatorKey, body: { name: 'House', tier: 'enterprise' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    house = created.body.apiKey.secret as string;
  });
  afterAll(async () => {
    await product?.stop();
  });

  async function register(title: string) {
    const registered = await api('POST', '/auction/objects/register', { key: house, body: { title, category: 'watch' } });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const label = registered.body.qr_data.gs1DigitalLink as string;
    return { label, serial: registered.body.qr_data.serial as string, gtin: /\/01\/(\d{14})/.exec(label)?.[1] as string };
  }

  it('shows a label its brand blocked as counterfeit as counterfeit, as POST /code/verify does, and an unblocked one as authentic', async () => {
    const genuine = await register('Daytona 6263');
    expect(JSON.parse(await scanLabel(genuine.label, 'application/json'))).toMatchObject({ status: 'authentic' });
    expect(headlineOf(await scanLabel(genuine.label, 'text/html'))).toBe('Authentic product');

    const blocked = await register('Submariner 5513');
    const block = await api('POST', '/blocklist', {
      key: house,
      body: { gtin: blocked.gtin, serial: blocked.serial, kind: 'counterfeit', reason: 'label copied' },
    });
    expect(block.status, JSON.stringify(block.body)).toBe(201);
    const verified = await api('POST', '/code/verify', { key: house, body: { url: blocked.label } });
    expect(verified.body.verdict, JSON.stringify(verified.body)).toBe('COUNTERFEIT');

    const json = JSON.parse(await scanLabel(blocked.label, 'application/json'));
    expect(json).toMatchObject({ status: 'counterfeit', blocked: { kind: 'counterfeit' } });
    expect(json.riskIndicators).toContain('KNOWN_COUNTERFEIT_PATTERN');
    // The object's own record is still shown: the verdict is the scan's.
    expect(json.object).toMatchObject({ title: 'Submariner 5513', serial: blocked.serial });
    // The brand's notes stay the brand's.
    expect(JSON.stringify(json)).not.toContain('label copied');
    const page = await scanLabel(blocked.label, 'text/html');
    expect(headlineOf(page)).toBe('Counterfeit: do not use');
    expect(page).not.toContain('Authentic product');
    // Why, truthfully: the tag's signature is genuine, the house marked the label (not "the signature
    // does not match"), the reason listed, and the report form the page tells the shopper to use.
    expect(page).toContain('the auction house has marked this label as counterfeit');
    expect(page).not.toContain('does not match the one issued');
    expect(page).toContain('It matches a known counterfeit pattern');
    expect(page).toContain('<form method="post" action="/resolver/report">');
    expect(await scanLabel(genuine.label, 'text/html')).not.toContain('<form');

    // Each view is one scan (with the API's, three), recorded with the verdict the page showed.
    const verdicts = await waitFor('the scans recorded', async () => {
      const scans = await api('GET', `/scans?gtin=${blocked.gtin}`, { key: house });
      expect(scans.status, JSON.stringify(scans.body)).toBe(200);
      const listed = (scans.body.scans as Json[]).map((scan) => scan.verdict);
      return listed.length >= 3 ? listed : undefined;
    });
    expect(verdicts.every((verdict) => verdict === 'COUNTERFEIT')).toBe(true);
  });

  it('the public look-up by serial says what the house said of the label: counterfeit when blocked so, suspicious when withdrawn, authentic again once unblocked', async () => {
    // No key, as a buyer asks it: the serial typed from the label.
    const lookUp = async (serial: string) => {
      const response = await fetchFrom(newClientAddress(), `${product.url}/api/v1/auction/public/verify/${serial}`);
      expect(response.status, response.text.slice(0, 300)).toBe(200);
      return JSON.parse(response.text) as Json;
    };
    const genuine = await register('Speedmaster 2915');
    const plain = await lookUp(genuine.serial);
    expect(plain).toMatchObject({ status: 'authentic' });
    expect(plain.blocked).toBeUndefined();
    expect(plain.riskIndicators).toBeUndefined();

    const copied = await register('Milgauss 6541');
    const block = await api('POST', '/blocklist', {
      key: house,
      body: { gtin: copied.gtin, serial: copied.serial, kind: 'counterfeit', reason: 'copied tag seen in Geneva' },
    });
    expect(block.status, JSON.stringify(block.body)).toBe(201);
    const counterfeit = await lookUp(copied.serial);
    expect(counterfeit).toMatchObject({
      status: 'counterfeit',
      confidence: 0.99,
      riskIndicators: ['KNOWN_COUNTERFEIT_PATTERN'],
      blocked: { kind: 'counterfeit' },
      object: { title: 'Milgauss 6541', serial: copied.serial },
    });
    // The house's notes and ids stay the house's.
    expect(JSON.stringify(counterfeit)).not.toContain('Geneva');
    expect(counterfeit.blocked.blockId).toBeUndefined();

    const withdrawn = await register('Explorer 1016');
    const withdrawal = await api('POST', '/blocklist', {
      key: house,
      body: { gtin: withdrawn.gtin, serial: withdrawn.serial, kind: 'withdrawn' },
    });
    expect(withdrawal.status, JSON.stringify(withdrawal.body)).toBe(201);
    expect(await lookUp(withdrawn.serial)).toMatchObject({
      status: 'suspicious',
      confidence: 0.9,
      blocked: { kind: 'withdrawn' },
    });

    // Unblocked: the object's own record again (every replica follows the change).
    const removed = await api('DELETE', `/blocklist/${block.body.blockId}`, { key: house });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    await waitFor('the block lifted', async () => ((await lookUp(copied.serial)).status === 'authentic' ? true : undefined));
    // Another house's object is untouched by this house's blocklist: the block is the label owner's word only.
    expect(await lookUp(genuine.serial)).toMatchObject({ status: 'authentic' });
  });

  it('says of a brand code it blocked that its signature is genuine and the brand marked it, not that the signature does not match', async () => {
    const operator = product.operatorKey;
    const created = await api('POST', '/accounts', { key: operator, body: { name: 'Brand', tier: 'enterprise' } });
    const brand = created.body.apiKey.secret as string;
    const gtin = '09506000134376';
    await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { gtin } });
    const code = await api('POST', '/code/generate', { key: brand, body: { gtin, serialNumber: 'BLOCKED-PAGE-1' } });
    expect(code.status, JSON.stringify(code.body)).toBe(201);
    const block = await api('POST', '/blocklist', { key: brand, body: { gtin, serial: 'BLOCKED-PAGE-1', kind: 'counterfeit' } });
    expect(block.status, JSON.stringify(block.body)).toBe(201);
    const page = await scanLabel(code.body.url, 'text/html');
    expect(headlineOf(page)).toBe('Counterfeit: do not use');
    expect(page).toContain('Its signature is genuine, but the brand has marked this code as counterfeit');
    expect(page).not.toContain('Its signature does not match a code issued here.');
    expect(page).toContain('It matches a known counterfeit pattern');
  });
});
