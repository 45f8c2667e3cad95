// Resolver errors chosen by Accept (an HTML page or the JSON envelope), wherever they were raised: a
// limit's 429 before the route, a compressed link that does not decompress. Each says so (Vary:
// Accept) and is kept out of caches, as every other resolver answer is; these two carried neither
// (a review of 2026-12-05). Over real HTTP, embedded form.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchFrom, newClientAddress } from '../support/client-address.ts';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;
let t: TestProduct;
let brand: string;
const gtin = '09506000134376';
const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);
const pathOf = (url: string) => url.slice(new URL(url).origin.length);

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '3' });
  const operator = t.product.generatedOperatorKey as string;
  const created = await api('POST', '/accounts', { key: operator, body: { name: 'Brand', tier: 'enterprise' } });
  brand = created.body.apiKey.secret as string;
  await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { gtin } });
});
afterAll(async () => {
  await t?.stop();
});

describe('resolver errors chosen by Accept say so (Vary: Accept) and are never stored', () => {
  it('a compressed link that does not decompress: the JSON answer as the HTML one', async () => {
    const path = '/AAAAAAAAAAAAAAAAAAAA';
    const htmlAnswer = await fetchFrom(newClientAddress(), `${t.url}${path}`, { headers: { accept: 'text/html' } });
    const jsonAnswer = await fetchFrom(newClientAddress(), `${t.url}${path}`, { headers: { accept: 'application/json' } });
    expect(htmlAnswer.headers.get('content-type')).toContain('text/html');
    expect(jsonAnswer.headers.get('content-type')).toContain('application/json');
    const headersOf = (r: typeof htmlAnswer) => ({ vary: r.headers.get('vary'), cacheControl: r.headers.get('cache-control') });
    expect(headersOf(htmlAnswer)).toEqual({ vary: 'Accept, Accept-Language', cacheControl: 'no-store' });
    expect(headersOf(jsonAnswer)).toEqual({ vary: 'Accept, Accept-Language', cacheControl: 'no-store' });
  });

  it('the verification page’s 429, a page or JSON by Accept, says so', async () => {
    const code = await api('POST', '/code/generate', { key: brand, body: { gtin, serialNumber: 'RV-429' } });
    expect(code.status, JSON.stringify(code.body)).toBe(201);
    const from = newClientAddress();
    // Eight at once from one address, over its 3 a second.
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        fetchFrom(from, `${t.url}/verify${pathOf(code.body.url)}`, {
          headers: { accept: i % 2 ? 'application/json' : 'text/html' },
        }),
      ),
    );
    const limited = answers.filter((answer) => answer.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    for (const answer of limited) {
      expect([answer.headers.get('vary'), answer.headers.get('cache-control')]).toEqual(['Accept, Accept-Language', 'no-store']);
      // Every resolver answer's headers, refusals included (docs/RESOLVER.md; an audit of 2026-12-07
      // found the 429 page without the referrer policy, and its JSON without CORS).
      expect([answer.headers.get('referrer-policy'), answer.headers.get('access-control-allow-origin')]).toEqual([
        'same-origin',
        '*',
      ]);
    }
  });
});
