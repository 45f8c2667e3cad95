import { describe, expect, it } from 'vitest';
import { isCrossSiteForm } from './cross-site-form.ts';

const own = ['https://id.brand.example', 'http://127.0.0.1:8080'];

describe('isCrossSiteForm', () => {
  it('takes the page’s own form: a same-origin, top-level post from one of its origins', () => {
    const headers = { 'sec-fetch-site': 'same-origin', 'sec-fetch-dest': 'document', origin: 'https://id.brand.example' };
    expect(isCrossSiteForm(headers, own)).toBe(false);
    expect(isCrossSiteForm({ ...headers, origin: 'http://127.0.0.1:8080' }, own)).toBe(false);
  });

  it('takes a client that is not a browser (none of these headers): it stays limited per address', () => {
    expect(isCrossSiteForm({}, own)).toBe(false);
  });

  it('refuses another site’s page, a frame, an opaque or foreign origin', () => {
    for (const site of ['cross-site', 'same-site', 'none', 'Cross-Site ']) {
      expect(isCrossSiteForm({ 'sec-fetch-site': site }, own), site).toBe(true);
    }
    expect(isCrossSiteForm({ 'sec-fetch-site': 'same-origin', 'sec-fetch-dest': 'iframe' }, own)).toBe(true);
    // Without Fetch Metadata (an older browser), the origin decides.
    for (const origin of ['https://attacker.example', 'null', 'https://id.brand.example.attacker.example', 'garbage']) {
      expect(isCrossSiteForm({ origin }, own), origin).toBe(true);
    }
    // With it, the browser's word decides: a page under a no-referrer policy posts Origin: null to itself.
    expect(isCrossSiteForm({ 'sec-fetch-site': 'same-origin', 'sec-fetch-dest': 'document', origin: 'null' }, own)).toBe(false);
    expect(isCrossSiteForm({ 'sec-fetch-site': 'cross-site', origin: 'https://id.brand.example' }, own)).toBe(true);
  });
});
