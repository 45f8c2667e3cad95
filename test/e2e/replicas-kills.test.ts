// Replicas (a review of replicas and kills, 2026-12-04; these held): code-service and compliance-service replicas killed (SIGKILL) mid batch generate, then
// restarted; the keyed retry through the other gateway. Afterwards every code has its event, its
// Merkle tree (one leaf, the root the leaf hash of its chained event), its directory row, and the
// day's quota counts each code once.
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earlyInWindow } from '../support/client-address.ts';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call } from '../support/embedded.ts';
import { sqlOnce } from '../support/sql-once.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const gtin = '09506000134352';
let product: DistributedProduct;

const api = (url: string, method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(url, method, `/api/v1${path}`, options);

const sql = <T = Json>(text: string, params: unknown[] = []) => sqlOnce<T>(product.databaseUrl, text, params);
const countOf = async (text: string, params: unknown[]) => Number((await sql<{ n: string }>(text, params))[0]?.n);

describe('code-service and compliance-service killed mid-batch and restarted', () => {
  beforeAll(async () => {
    product = await startDistributedProduct(
      { HALLMARK_IDEMPOTENCY_LEASE_MS: '1500' },
      { gateways: 2, replicas: { 'code-service': 2, 'compliance-service': 2 } },
    );
  }, 120_000);
  afterAll(async () => {
    await product?.stop();
  }, 60_000);

  it('leaves codes, events, Merkle trees, directory rows and quota consistent after the keyed retry', async () => {
    await earlyInWindow(86_400_000, 120_000);
    const created = await api(product.url, 'POST', '/accounts', {
      key: product.operatorKey,
      body: { name: 'Kill brand', tier: 'starter' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const key = created.body.apiKey.secret as string;
    const granted = await api(product.url, 'POST', `/accounts/${created.body.account.id}/gtins`, {
      key: product.operatorKey,
      body: { gtin },
    });
    expect(granted.status).toBe(201);
    const prefix = `CK-${randomUUID().slice(0, 6)}`;
    const items = Array.from({ length: 450 }, (_, i) => ({
      gtin,
      serialNumber: `${prefix}-${i}`,
      metadata: { name: `Item ${i}`, notes: 'n'.repeat(13_000) },
    }));
    const idempotencyKey = `kill-${randomUUID()}`;
    const [first, second] = product.gatewayUrls as [string, string];
    const firstAttempt = api(first, 'POST', '/code/generate/batch', {
      key,
      headers: { 'idempotency-key': idempotencyKey },
      body: { items },
    });
    await waitFor(
      'the batch’s first codes',
      async () =>
        (await countOf('SELECT count(*) AS n FROM codes WHERE serial LIKE $1', [`${prefix}-%`])) > 0 ? true : undefined,
      { timeoutMs: 30_000, intervalMs: 10 },
    );
    await Promise.all([product.kill('code-service-1'), product.kill('compliance-service-1')]);
    const cut = await firstAttempt;
    await product.restart('code-service-1');
    await product.restart('compliance-service-1');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const madeByFirst = await countOf('SELECT count(*) AS n FROM codes WHERE serial LIKE $1', [`${prefix}-%`]);

    const retry = await waitFor(
      'the keyed retry',
      async () => {
        const answer = await api(second, 'POST', '/code/generate/batch', {
          key,
          headers: { 'idempotency-key': idempotencyKey },
          body: { items },
        });
        return answer.status === 409 || answer.status === 503 ? undefined : answer;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const summary = { firstStatus: cut.status, firstError: cut.body.error?.details, madeByFirst, retryStatus: retry.status };
    expect(retry.status, JSON.stringify({ ...summary, retryError: retry.body.error })).toBe(200);
    const codes = retry.body.results.map((result: Json) => result.code).filter(Boolean);
    expect(codes, JSON.stringify(summary)).toHaveLength(items.length);

    // Every code stored once, each with exactly one code.generated event in its own stream.
    const assetIds = codes.map((code: Json) => code.assetId as string);
    expect(new Set(assetIds).size).toBe(items.length);
    expect(await countOf('SELECT count(*) AS n FROM codes WHERE serial LIKE $1', [`${prefix}-%`])).toBe(items.length);
    expect(
      await countOf(`SELECT count(*) AS n FROM event_log WHERE event_type = 'code.generated' AND stream_id = ANY($1::text[])`, [
        assetIds.map((id: string) => `asset-${id}`),
      ]),
    ).toBe(items.length);
    // The projections catch up: one one-leaf tree per code, one directory row per code.
    await waitFor(
      'the projections',
      async () => {
        const trees = await countOf('SELECT count(*) AS n FROM provenance_assets WHERE asset_id = ANY($1::text[])', [assetIds]);
        const directory = await countOf('SELECT count(*) AS n FROM code_directory WHERE asset_id = ANY($1::text[])', [assetIds]);
        return trees === items.length && directory === items.length ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(
      await countOf('SELECT count(*) AS n FROM provenance_assets WHERE asset_id = ANY($1::text[]) AND tree_size <> 1', [
        assetIds,
      ]),
    ).toBe(0);
    // A sample across the batch, through the compliance API: the chain checks and the root is its one leaf.
    for (const assetId of assetIds.filter((_: string, i: number) => i % 45 === 0)) {
      const verified = await api(second, 'GET', `/compliance/${assetId}/verify`, { key });
      expect(verified.body, assetId).toMatchObject({ isValid: true, eventCount: 1 });
      const root = await api(second, 'GET', `/compliance/${assetId}/merkle/root`, { key });
      expect(root.body, assetId).toMatchObject({ treeSize: 1 });
      const leaf = createHash('sha256')
        .update(Buffer.concat([Buffer.from([0]), Buffer.from(verified.body.headHash, 'hex')]))
        .digest('hex');
      expect(root.body.rootHash, assetId).toBe(leaf);
    }
    // The day's quota: one unit per code made, however many attempts it took.
    const usage = await api(second, 'GET', '/usage', { key });
    const used = usage.body.quotas?.find((quota: Json) => quota.name === 'generate')?.used;
    expect(used, JSON.stringify(summary)).toBe(items.length);
  }, 180_000);
});
