// A code's row names its link form instead of holding its link (code-service migration 0009, issue
// #19): the link is written again from the resolver origin and order the code was made with. An
// operator who moves the resolver (HALLMARK_RESOLVER_URL) or changes the link order must not bend
// the links of codes already printed: every reader answers each earlier code with the exact link it
// was issued, and new codes get the new form. The embedded product (`hallmark start`) over HTTP,
// restarted on its data folder with the new settings; then its database read as it is. And a
// rolling update (distributed): while a code-service of a release before link forms is connected,
// which reads a code's link from its row only, new rows hold their links whole. Likewise the signing
// key id (code-service migration 0010, verify-service migration 0012): named by the form and by a
// number while no code-service or verify-service of a release before is connected, whole otherwise.

import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgliteDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call } from '../support/embedded.ts';
import { type HallmarkServer, startHallmarkServer } from '../support/hallmark-server.ts';
import { acrossOlderSession, quickReleaseGates } from '../support/older-session.ts';
import { sqlOnce } from '../support/sql-once.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const gtin = '09506000134352';
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startOn(dataDir: string, env: Record<string, string>): Promise<HallmarkServer> {
  const server = await startHallmarkServer(dataDir, env);
  cleanups.push(server.dispose);
  return server;
}

async function stop(server: HallmarkServer): Promise<void> {
  server.child.kill('SIGTERM');
  expect((await server.exited).code).toBe(0);
}

describe('link forms: a code keeps the link it was issued', () => {
  it('answers earlier codes with their issued links after the resolver origin and link order change, and new codes with the new ones', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'hallmark-link-forms-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const first = await startOn(dataDir, { HALLMARK_RESOLVER_URL: 'https://old.brand.example', HALLMARK_LINK_ORDER: 'spec' });
    const operatorKey = (await readFile(join(dataDir, 'operator-key'), 'utf8')).trim();
    const api = (url: string, method: string, path: string, body?: unknown) =>
      call<Json>(url, method, `/api/v1${path}`, { key: operatorKey, ...(body !== undefined ? { body } : {}) });

    // A code alone, and a batch, with serials and batches that need escaping in a link.
    const one = await api(first.url, 'POST', '/code/generate', {
      gtin,
      serialNumber: "A/1%b!'()*",
      batchNumber: 'L&7/2',
      expiryDate: '2027-12-31',
    });
    expect(one.status, JSON.stringify(one.body)).toBe(201);
    const batch = await api(first.url, 'POST', '/code/generate/batch', {
      items: [
        { gtin, serialNumber: 'B-1' },
        { gtin, serialNumber: 'B-2', batchNumber: 'L2' },
        { gtin, serialNumber: 'B:3;=?', expiryDate: '2028-01-31' },
      ],
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    const issued: Array<{ assetId: string; url: string; serial: string }> = [
      one.body,
      ...batch.body.results.map((r: Json) => r.code),
    ].map((code: Json) => ({ assetId: code.assetId, url: code.url, serial: code.serial }));
    expect(issued).toHaveLength(4);
    for (const code of issued) expect(code.url.startsWith('https://old.brand.example/01/')).toBe(true);
    expect(one.body.url).toContain('/21/A%2F1%25b%21%27%28%29%2A/10/L%267%2F2?17=271231&sig=');
    await stop(first);

    // The operator moves the resolver and switches to GS1's order.
    const second = await startOn(dataDir, { HALLMARK_RESOLVER_URL: 'https://new.brand.example', HALLMARK_LINK_ORDER: 'gs1' });
    for (const code of issued) {
      const found = await api(second.url, 'GET', `/codes/${code.assetId}`);
      expect(found.status).toBe(200);
      expect(found.body.url, code.serial).toBe(code.url);
      const listed = await api(second.url, 'GET', `/codes?serial=${encodeURIComponent(code.serial)}`);
      expect(listed.body.data.map((item: Json) => item.url)).toEqual([code.url]);
      // And the issued link still verifies as itself.
      const verified = await api(second.url, 'POST', '/code/verify', { url: code.url });
      expect(verified.body.verdict, JSON.stringify(verified.body)).toBe('AUTHENTIC');
    }
    const fresh = await api(second.url, 'POST', '/code/generate', { gtin, serialNumber: 'NEW-1', batchNumber: 'L9' });
    expect(fresh.status).toBe(201);
    expect(fresh.body.url).toMatch(/^https:\/\/new\.brand\.example\/01\/09506000134352\/10\/L9\/21\/NEW-1\?sig=/);
    expect((await api(second.url, 'GET', `/codes/${fresh.body.assetId}`)).body.url).toBe(fresh.body.url);
    await stop(second);

    // Every row names its form; no link text is stored in them.
    const db = await createPgliteDatabase(join(dataDir, 'pglite'));
    try {
      const rows = await db.query<{ serial: string; url: string | null; origin: string; link_order: string }>(
        `SELECT c.serial, c.url, f.origin, f.link_order FROM codes c JOIN code_link_forms f ON f.id = c.link_form ORDER BY c.serial`,
      );
      expect(rows.map((row) => row.serial).sort()).toEqual([...issued.map((code) => code.serial), 'NEW-1'].sort());
      expect(rows.filter((row) => row.url !== null)).toEqual([]);
      expect(rows.find((row) => row.serial === 'NEW-1')).toMatchObject({
        origin: 'https://new.brand.example',
        link_order: 'gs1',
      });
      expect(rows.find((row) => row.serial === 'B-1')).toMatchObject({ origin: 'https://old.brand.example', link_order: 'spec' });
      // Nor any signing key id: the forms name the key (code-service migration 0010), the code
      // directory its number (verify-service migration 0012).
      const keys = await db.query<{ serial: string; kid: string | null; form_kid: string | null }>(
        `SELECT c.serial, c.kid, f.kid AS form_kid FROM codes c JOIN code_link_forms f ON f.id = c.link_form`,
      );
      expect(keys.filter((row) => row.kid !== null || row.form_kid === null)).toEqual([]);
      const directory = await db.query<{ serial: string; kid: string | null; key: string | null }>(
        `SELECT d.serial, d.kid, k.kid AS key FROM code_directory d LEFT JOIN directory_keys k ON k.id = d.key_id`,
      );
      expect(directory.map((row) => row.serial).sort()).toEqual(rows.map((row) => row.serial).sort());
      expect(directory.filter((row) => row.kid !== null || row.key !== keys[0]?.form_kid)).toEqual([]);
    } finally {
      await db.close();
    }
  }, 180_000);
});

describe('a rolling update from a code-service that reads links from rows only (distributed)', () => {
  let product: DistributedProduct;
  beforeAll(async () => {
    product = await startDistributedProduct(quickReleaseGates);
  }, 120_000);
  afterAll(async () => {
    await product?.stop();
  }, 60_000);

  /** A batch of `count` codes of the operator's, their serials `<prefix>-<n>` under a new prefix. */
  const generateBatch = async (label: string, count: number) => {
    const prefix = `${label}-${randomUUID().slice(0, 8)}`;
    const made = await call<Json>(product.url, 'POST', '/api/v1/code/generate/batch', {
      key: product.operatorKey,
      body: { items: Array.from({ length: count }, (_, i) => ({ gtin, serialNumber: `${prefix}-${i}` })) },
    });
    expect(made.status, JSON.stringify(made.body).slice(0, 300)).toBe(200);
    return { prefix, made };
  };

  /** A batch of the operator's; how its rows hold their links (whole or as a form), and whether every answer and listing gives the issued link. */
  const batchOf = async (count: number) => {
    const { prefix, made } = await generateBatch('LF', count);
    const [counts] = await sqlOnce<{ whole: string; forms: string }>(
      product.databaseUrl,
      `SELECT count(*) FILTER (WHERE url IS NOT NULL AND link_form IS NULL)::text AS whole,
              count(*) FILTER (WHERE url IS NULL AND link_form IS NOT NULL)::text AS forms
         FROM codes WHERE serial LIKE $1`,
      [`${prefix}-%`],
    );
    const listed = await call<Json>(product.url, 'GET', `/api/v1/codes?gtin=${gtin}&limit=200`, { key: product.operatorKey });
    const issued = new Map(made.body.results.map((result: Json) => [result.code.assetId, result.code.url]));
    const mine = listed.body.data.filter((item: Json) => issued.has(item.assetId));
    expect(mine).toHaveLength(count);
    expect(mine.filter((item: Json) => item.url !== issued.get(item.assetId))).toEqual([]);
    return { whole: Number(counts?.whole), forms: Number(counts?.forms) };
  };

  it('stores links whole while such a code-service is connected, then as their forms', async () => {
    // A code-service of 2026-12-06: its sessions bear `hallmark/code-service`. While it is connected
    // (after the gate's next look), every row holds its link.
    const { during, after } = await acrossOlderSession(product.databaseUrl, 'hallmark/code-service', () => batchOf(50));
    expect(during).toEqual({ whole: 50, forms: 0 });
    expect(after).toEqual({ whole: 0, forms: 50 });
  }, 60_000);

  /**
   * A batch of the operator's; how its `codes` rows and its `code_directory` rows (once projected)
   * hold their signing key ids (whole, or by form or number), and its codes' verdicts.
   */
  const keysOf = async (count: number) => {
    const { prefix, made } = await generateBatch('KF', count);
    const counts = async () =>
      (
        await sqlOnce<{ codes_whole: number; codes_form: number; directory_whole: number; directory_number: number }>(
          product.databaseUrl,
          `SELECT (SELECT count(*) FILTER (WHERE c.kid IS NOT NULL) FROM codes c WHERE c.serial LIKE $1)::int AS codes_whole,
                  (SELECT count(*) FILTER (WHERE c.kid IS NULL AND f.kid IS NOT NULL)
                     FROM codes c JOIN code_link_forms f ON f.id = c.link_form WHERE c.serial LIKE $1)::int AS codes_form,
                  (SELECT count(*) FILTER (WHERE d.kid IS NOT NULL) FROM code_directory d WHERE d.serial LIKE $1)::int AS directory_whole,
                  (SELECT count(*) FILTER (WHERE d.kid IS NULL AND d.key_id IS NOT NULL)
                     FROM code_directory d WHERE d.serial LIKE $1)::int AS directory_number`,
          [`${prefix}-%`],
        )
      )[0];
    let stored = await counts();
    for (let tries = 0; stored && stored.directory_whole + stored.directory_number < count && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      stored = await counts();
    }
    const verdicts = new Set<string>();
    for (const result of made.body.results.slice(0, 3)) {
      const verified = await call<Json>(product.url, 'POST', '/api/v1/code/verify', {
        key: product.operatorKey,
        body: { url: result.code.url },
      });
      verdicts.add(verified.body.verdict);
    }
    return { ...stored, verdicts: [...verdicts] };
  };

  it('stores signing key ids whole while a code-service or verify-service of the release before key forms is connected, then by form and number', async () => {
    // Processes of the release with link forms: their sessions bear `hallmark/<service>/2`, and they
    // read a code's key id from its row only.
    const { during, after } = await acrossOlderSession(
      product.databaseUrl,
      ['hallmark/code-service/2', 'hallmark/verify-service/2'],
      () => keysOf(40),
    );
    expect(during).toEqual({ codes_whole: 40, codes_form: 0, directory_whole: 40, directory_number: 0, verdicts: ['AUTHENTIC'] });
    expect(after).toEqual({ codes_whole: 0, codes_form: 40, directory_whole: 0, directory_number: 40, verdicts: ['AUTHENTIC'] });
  }, 60_000);
});
