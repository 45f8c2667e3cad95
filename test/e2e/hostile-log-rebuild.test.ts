// An operator under pressure against the compliance evidence: the event store lost an event that the
// Merkle log recorded (a row deleted, by hand or by a restore), which GET /compliance/{id}/verify
// reports as LOG_MISMATCH. `hallmark projections rebuild` replays the events into the log; before
// 2026-12-05 it dropped the log first, so the history verified valid again and the evidence of the
// loss was gone. Now it leaves such a log as it was unless told `--accept-differences`.
// Contract: docs/CLI.md ("Projection rebuilds"), docs/COMPLIANCE.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createEnterpriseAccount, restartTestProduct, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { runHallmark } from '../support/hallmark-cli.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let brand: { id: string; key: string };

const api = (method: string, path: string, key: string, body?: unknown) =>
  call<Json>(t.url, method, `/api/v1${path}`, body === undefined ? { key } : { key, body });

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_LOG_LEVEL: 'warn' });
  brand = await createEnterpriseAccount(t.url, t.product.generatedOperatorKey as string, 'Rebuild house');
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

describe('hallmark projections rebuild against a log the events no longer give', () => {
  it('keeps the LOG_MISMATCH evidence over real HTTP unless the operator accepts the difference', async () => {
    const registered = await api('POST', '/auction/objects/register', brand.key, {
      title: 'Rebuilt watch',
      category: 'watch',
      ownerId: 'client-1',
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const objectId = registered.body.object.id as string;
    for (const note of ['first look', 'second look']) {
      const recorded = await api('POST', '/auction/provenance/events', brand.key, {
        objectId,
        eventType: 'cataloged',
        actorRole: 'auction_house',
        evidence: { note },
      });
      expect(recorded.status, JSON.stringify(recorded.body)).toBe(201);
    }
    const other = await api('POST', '/auction/objects/register', brand.key, {
      title: 'Untouched watch',
      category: 'watch',
      ownerId: 'client-2',
    });
    expect(other.status).toBe(201);
    const otherRoot = await api('GET', `/compliance/${other.body.object.id}/merkle/root`, brand.key);
    expect(otherRoot.status).toBe(200);
    const verified = await api('GET', `/compliance/${objectId}/verify`, brand.key);
    expect(verified.body).toMatchObject({ isValid: true, eventCount: 3 });

    // The event store loses the object's last event; the log still holds its leaf.
    await t.product.db.query(`DELETE FROM events WHERE stream_id = $1 AND stream_version = 3`, [`asset-${objectId}`]);
    const mismatch = await api('GET', `/compliance/${objectId}/verify`, brand.key);
    expect(mismatch.body).toMatchObject({ isValid: false, eventCount: 2, brokenAt: { reason: 'LOG_MISMATCH', sequence: 3 } });

    // The operator stops the product and rebuilds: refused, the object named, nothing replaced.
    await t.stopKeepingData();
    const refused = await runHallmark(t.dataDir, {}, ['projections', 'rebuild']);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain(`${objectId}: the log recorded events the store no longer holds (log 3 leaves, events 2)`);
    expect(refused.stderr).toContain('--accept-differences');
    expect(refused.stdout).toBe('');
    t = await restartTestProduct(t);
    const kept = await api('GET', `/compliance/${objectId}/verify`, brand.key);
    expect(kept.body).toMatchObject({ isValid: false, brokenAt: { reason: 'LOG_MISMATCH', sequence: 3 } });
    expect((await api('GET', `/compliance/${objectId}/merkle/root`, brand.key)).body.treeSize).toBe(3);

    // Told to, it replaces the log with what the events give; the untouched object keeps its root.
    await t.stopKeepingData();
    const accepted = await runHallmark(t.dataDir, {}, ['projections', 'rebuild', '--accept-differences']);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stdout).toContain('(replacing the log of 1 asset that differed)');
    t = await restartTestProduct(t);
    expect((await api('GET', `/compliance/${objectId}/verify`, brand.key)).body).toMatchObject({ isValid: true, eventCount: 2 });
    expect((await api('GET', `/compliance/${other.body.object.id}/merkle/root`, brand.key)).body.rootHash).toBe(
      otherRoot.body.rootHash,
    );
  }, 120_000);
});
