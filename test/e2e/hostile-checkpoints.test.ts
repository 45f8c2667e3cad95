// A brand that would rather an auditor did not see the end of an asset's history (a condition
// report, a sale) cuts its export short. Before 2026-12-04 the service signed, on request, a fresh
// checkpoint of any older tree size (`merkle/consistency?to=`), and checkpoints said nothing of
// when: an export of the first events with such a checkpoint audited as a complete, valid history.
// Now the service signs only the current tree, and each checkpoint carries the time it was signed
// (`hallmark-signed-at`, under the signature), which the audit reports: an export cut short can
// only use a checkpoint from back when the tree was that size, and shows that time.
import { auditExport, type ComplianceExportDocument, type JsonWebKeySet } from '@hallmark/client';
import { leafHash, referenceInclusionProof, referenceRoot } from '@hallmark/merkle';
import { leafInputOf } from '@hallmark/provenance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let house: string;
let objectId: string;
const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

const exportOf = (events: number) =>
  waitFor(`the object’s ${events}-event export`, async () => {
    const exported = await api('GET', `/compliance/${objectId}/export?format=json`, { key: house });
    return exported.status === 200 && exported.body.events?.length === events
      ? (exported.body as unknown as ComplianceExportDocument)
      : undefined;
  });

const record = async (eventType: string, extra: Json = {}) => {
  const recorded = await api('POST', '/auction/provenance/events', {
    key: house,
    body: { objectId, eventType, actorRole: 'auction_house', description: `${eventType} note`, ...extra },
  });
  expect(recorded.status, JSON.stringify(recorded.body)).toBe(201);
};

/** The time line of a signed note's text (the audit reads it only from a verified checkpoint). */
const signedAtIn = (note: string) => /^hallmark-signed-at (\S+)$/m.exec(note)?.[1];

beforeAll(async () => {
  t = await startTestProduct();
  const operator = t.product.generatedOperatorKey as string;
  const created = await api('POST', '/accounts', { key: operator, body: { name: 'Auction house', tier: 'enterprise' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  house = created.body.apiKey.secret as string;
  const registered = await api('POST', '/auction/objects/register', {
    key: house,
    body: { title: 'Submariner 1680', category: 'watch', ownerId: 'client-jane' },
  });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  objectId = registered.body.object.id as string;
  await record('cataloged');
  // The event a seller would rather an auditor did not see.
  await record('condition_report', { evidence: { finding: 'replaced dial, cracked case back' } });
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

describe('checkpoints are signed for the current tree only, with the time', () => {
  it('signs no checkpoint of an older size on request, so an export cut short has none to show', async () => {
    const genuine = await exportOf(3);
    const jwks = (await call(t.url, 'GET', '/.well-known/jwks.json')).body as unknown as JsonWebKeySet;

    // The consistency proof to size 2 is given (it is what shows the history only grew), unsigned.
    const older = await api('GET', `/compliance/${objectId}/merkle/consistency?from=1&to=2`, { key: house });
    expect(older.status, JSON.stringify(older.body)).toBe(200);
    expect(older.body).toMatchObject({ fromSize: 1, toSize: 2 });
    expect(older.body.checkpoint).toBeUndefined();
    // To the current size, it carries the current tree's checkpoint, as root and proof do.
    const current = await api('GET', `/compliance/${objectId}/merkle/consistency?from=1`, { key: house });
    const root = await api('GET', `/compliance/${objectId}/merkle/root`, { key: house });
    for (const answer of [current, root]) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.checkpoint.note.split('\n')[1]).toBe('3');
    }

    // The attack of the review: the first two events, their paths for a tree of two, and whatever
    // checkpoint the service would give for size 2 (none now).
    const kept = genuine.events.slice(0, 2);
    const leaves = kept.map((event) => leafHash(leafInputOf(event.hash)));
    const truncated = {
      ...genuine,
      treeSize: 2,
      rootHash: referenceRoot(leaves).toString('hex'),
      checkpoint: older.body.checkpoint,
      events: kept.map((event, index) => ({
        ...event,
        auditPath: referenceInclusionProof(index, leaves).map((node) => node.toString('hex')),
      })),
    } as ComplianceExportDocument;
    const report = auditExport(truncated, jwks);
    expect(report.valid).toBe(false);
    expect(report.problems).toEqual(['The export carries no signed checkpoint.']);
    // With the current checkpoint instead, the count gives it away.
    const withCurrent = auditExport({ ...truncated, checkpoint: genuine.checkpoint }, jwks);
    expect(withCurrent.valid).toBe(false);
    expect(withCurrent.problems).toContain('The checkpoint covers 3 events; the export holds 2.');
  });

  it('reports when a checkpoint was signed, so an export kept from before shows its age', async () => {
    const before = t.clock.now().getTime();
    const earlier = await exportOf(3);
    const after = t.clock.now().getTime();
    const note = earlier.checkpoint?.note as string;
    const jwks = (await call(t.url, 'GET', '/.well-known/jwks.json')).body as unknown as JsonWebKeySet;
    const earlierReport = auditExport(earlier, jwks);
    expect(earlierReport).toMatchObject({ valid: true, treeSize: 3 });
    const earlierTime = Date.parse(earlierReport.checkpointSignedAt as string);
    expect(earlierTime).toBeGreaterThanOrEqual(before);
    expect(earlierTime).toBeLessThanOrEqual(after);
    expect(earlierReport.checkpointSignedAt).toBe(signedAtIn(note));

    // A day later the object is listed for sale: the current export says so, and when.
    t.clock.advance(24 * 3_600_000);
    await record('listed', { evidence: { lot: 12 } });
    const later = auditExport(await exportOf(4), jwks);
    expect(later).toMatchObject({ valid: true, treeSize: 4 });
    expect(Date.parse(later.checkpointSignedAt as string) - earlierTime).toBeGreaterThanOrEqual(24 * 3_600_000);
    // The earlier export still audits, as what it is: the history as of a day before.
    expect(auditExport(earlier, jwks)).toMatchObject({
      valid: true,
      treeSize: 3,
      checkpointSignedAt: earlierReport.checkpointSignedAt,
    });

    // Its time cannot be moved forward: it is under the signature.
    const retimed = {
      ...earlier,
      checkpoint: {
        ...earlier.checkpoint,
        note: note.replace(signedAtIn(note) as string, new Date(after + 24 * 3_600_000).toISOString()),
      },
    } as ComplianceExportDocument;
    expect(auditExport(retimed, jwks)).toMatchObject({ valid: false, checkpointSignedAt: undefined });
  });
});
