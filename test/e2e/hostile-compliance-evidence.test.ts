// Hostile review (2026-12-05) of the compliance evidence: can a crash (a stop right after
// acknowledged writes), a rebuild of the Merkle projection (`hallmark projections rebuild`), another
// tenant, or interleaved histories lose or bend what an auditor pulls? And does the offline auditor
// take a file whose text says another history than the one it checked?
//
// Contract: docs/COMPLIANCE.md ("The Merkle tree", "Read your writes", "Signed checkpoints",
// "Exports", "Auditing an export"), docs/API.md ("Compliance"), docs/CLI.md ("Projection rebuilds").
// Every expected value is computed here from the events' own contents (RFC 8785 + SHA-256 +
// RFC 9162 reference tree), never taken from the service's unsigned fields.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { auditExport, type ComplianceExportDocument, historyGrew, type JsonWebKeySet } from '@hallmark/client';
import { parseCsv } from '@hallmark/contracts';
import { ed25519PrivateKeyObject, open, parseMasterKey, signEd25519 } from '@hallmark/crypto';
import { leafHash, referenceInclusionProof, referenceRoot, verifyConsistency, verifyInclusion } from '@hallmark/merkle';
import { hashProvenanceRecord, leafInputOf, signCheckpoint } from '@hallmark/provenance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, restartTestProduct, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { runHallmark } from '../support/hallmark-cli.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;
type Export = ComplianceExportDocument;

const repo = fileURLToPath(new URL('../..', import.meta.url));
const cliPath = join(repo, 'apps/hallmark/bin/hallmark.js');
const pythonClient = join(repo, 'clients/python');
const gtin = '09506000134352';

let t: TestProduct;
let operator: string;
let folder: string;
let brand: { id: string; key: string };
let rival: { id: string; key: string };
/** Two objects of the brand and one of the rival, their events recorded interleaved. */
let objectA: Json;
let objectB: Json;
let objectR: Json;
let codeAsset: string;

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);
const hex = (value: string) => Buffer.from(value, 'hex');
const jwks = async () => (await call(t.url, 'GET', '/.well-known/jwks.json')).body as unknown as JsonWebKeySet;

async function account(name: string): Promise<{ id: string; key: string }> {
  const created = await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.account.id as string, key: created.body.apiKey.secret as string };
}

async function register(key: string, title: string): Promise<Json> {
  const registered = await api('POST', '/auction/objects/register', {
    key,
    body: { title, category: 'watch', ownerId: 'client-review' },
  });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  return registered.body.object as Json;
}

async function record(key: string, objectId: string, note: string, eventType = 'cataloged'): Promise<Json> {
  const recorded = await api('POST', '/auction/provenance/events', {
    key,
    body: { objectId, eventType, actorRole: 'auction_house', evidence: { note } },
  });
  expect(recorded.status, JSON.stringify(recorded.body).slice(0, 300)).toBe(201);
  return recorded.body;
}

async function exportOf(key: string, id: string): Promise<Export> {
  const answer = await api('GET', `/compliance/${id}/export?format=json`, { key });
  expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(200);
  return answer.body as unknown as Export;
}

/** The leaves of an export, each hash recomputed from the event's content (and each prevHash link checked). */
function leavesOf(document: Export): Buffer[] {
  let prevHash: string | null = null;
  return document.events.map((event, index) => {
    expect(event.sequence).toBe(index + 1);
    expect(event.prevHash).toBe(prevHash);
    const hash = hashProvenanceRecord({
      assetId: document.assetId,
      accountId: document.owner.accountId,
      environment: document.owner.environment as 'live' | 'test',
      sequence: event.sequence,
      type: event.type,
      occurredAt: event.occurredAt,
      data: event.data,
      prevHash,
    });
    expect(hash, `event ${index + 1} of ${document.assetId}`).toBe(event.hash);
    prevHash = hash;
    return leafHash(leafInputOf(hash));
  });
}

/** Size and root a signed checkpoint note states (its second and third lines), and its time. */
function checkpointOf(note: string): { size: number; root: string; signedAt: string | undefined } {
  const lines = note.split('\n');
  const signedAt = lines.find((line) => line.startsWith('hallmark-signed-at '))?.slice('hallmark-signed-at '.length);
  return { size: Number(lines[1]), root: Buffer.from(lines[2] as string, 'base64').toString('hex'), signedAt };
}

/** Everything an auditor could have pulled about one asset: root, every proof, the export. */
async function snapshot(key: string, id: string) {
  const root = await api('GET', `/compliance/${id}/merkle/root`, { key });
  expect(root.status, JSON.stringify(root.body)).toBe(200);
  const document = await exportOf(key, id);
  const proofs: Json[] = [];
  for (const event of document.events) {
    const proof = await api('GET', `/compliance/${id}/merkle/proof?eventId=${event.eventId}`, { key });
    expect(proof.status, JSON.stringify(proof.body)).toBe(200);
    const { checkpoint: _checkpoint, ...rest } = proof.body;
    proofs.push(rest);
  }
  return {
    treeSize: root.body.treeSize as number,
    rootHash: root.body.rootHash as string,
    note: root.body.checkpoint.note as string,
    proofs,
    document,
  };
}

function runChild(
  command: string,
  args: string[],
  timeoutMs = 30_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_LOG_LEVEL: 'warn' });
  operator = t.product.generatedOperatorKey as string;
  folder = await mkdtemp(join(tmpdir(), 'hallmark-review-evidence-'));
  brand = await account('Evidence house');
  rival = await account('Evidence rival');
  const grant = await api('POST', `/accounts/${brand.id}/gtins`, { key: operator, body: { gtin } });
  expect(grant.status, JSON.stringify(grant.body)).toBe(201);
  const code = await api('POST', '/code/generate', { key: brand.key, body: { gtin, serialNumber: 'EVIDENCE-1' } });
  expect(code.status, JSON.stringify(code.body)).toBe(201);
  codeAsset = code.body.assetId as string;

  objectA = await register(brand.key, 'Interleaved A');
  objectB = await register(brand.key, 'Interleaved B');
  objectR = await register(rival.key, 'Interleaved rival');
  // Interleaved, concurrently: the three histories land in the same projection pages.
  for (let index = 0; index < 8; index++) {
    await Promise.all([
      record(brand.key, objectA.id, `A-${index}`),
      record(brand.key, objectB.id, `B-${index}`),
      record(rival.key, objectR.id, `R-${index}`),
    ]);
  }
}, 120_000);

afterAll(async () => {
  await t?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('interleaved histories of two assets and two tenants', () => {
  it('gives each asset the RFC 9162 tree of its own events only, and a proof of one never answers under another', async () => {
    const documents = new Map<string, Export>();
    for (const [key, object] of [
      [brand.key, objectA],
      [brand.key, objectB],
      [rival.key, objectR],
    ] as const) {
      const document = await exportOf(key, object.id);
      documents.set(object.id, document);
      expect(document.treeSize).toBe(9);
      const leaves = leavesOf(document);
      const root = await api('GET', `/compliance/${object.id}/merkle/root`, { key });
      expect(root.body.rootHash).toBe(referenceRoot(leaves).toString('hex'));
      expect(checkpointOf(root.body.checkpoint.note)).toMatchObject({ size: 9, root: referenceRoot(leaves).toString('hex') });
      for (const [index, event] of document.events.entries()) {
        const proof = await api('GET', `/compliance/${object.service_serial}/merkle/proof?eventId=${event.eventId}`, { key });
        expect(proof.status).toBe(200);
        expect(proof.body.leafIndex).toBe(index);
        expect(proof.body.auditPath).toEqual(referenceInclusionProof(index, leaves).map((hash) => hash.toString('hex')));
      }
    }

    const a = documents.get(objectA.id) as Export;
    const r = documents.get(objectR.id) as Export;
    // The shape of "not in this history": an event id nobody stored, under the brand's own object B.
    const unknownId = '00000000-0000-4000-8000-000000000000';
    const normalise = (body: Json, eventId: string, asset: string) =>
      JSON.parse(JSON.stringify(body.error).replaceAll(eventId, '<event>').replaceAll(asset, '<asset>'));
    const unknown = await api('GET', `/compliance/${objectB.id}/merkle/proof?eventId=${unknownId}`, { key: brand.key });
    expect(unknown.status).toBe(404);
    const shape = normalise(unknown.body, unknownId, objectB.id);
    // A's later event (leaf 4) and A's first event (the asset row's), asked under B by id and serial:
    // the same answer as the unknown id. The rival's event under the brand's B: the same.
    for (const eventId of [a.events[4]?.eventId, a.events[0]?.eventId, r.events[3]?.eventId] as string[]) {
      for (const idOrSerial of [objectB.id, objectB.service_serial]) {
        const answer = await api('GET', `/compliance/${idOrSerial}/merkle/proof?eventId=${eventId}`, { key: brand.key });
        expect(answer.status, `${eventId} under ${idOrSerial}`).toBe(404);
        expect(normalise(answer.body, eventId, idOrSerial)).toEqual(shape);
      }
    }
    // Another tenant, its own object R, the brand's event: the same again, and never a hash of A.
    const crossTenant = await api('GET', `/compliance/${objectR.id}/merkle/proof?eventId=${a.events[4]?.eventId}`, {
      key: rival.key,
    });
    expect(crossTenant.status).toBe(404);
    expect(normalise(crossTenant.body, a.events[4]?.eventId as string, objectR.id)).toEqual(shape);

    // The rival's export names nothing of the brand's histories (ids, hashes, counts of A).
    const rivalText = JSON.stringify(r);
    for (const event of a.events) {
      expect(rivalText).not.toContain(event.eventId);
      expect(rivalText).not.toContain(event.hash);
    }
    expect(rivalText).not.toContain(brand.id);

    // The CSV form of A: every event row's proof verifies against the root its signed checkpoint row names.
    const csv = await fetch(`${t.url}/api/v1/compliance/${objectA.id}/export?format=csv`, {
      headers: { 'x-api-key': brand.key },
    });
    const rows = [...parseCsv(await csv.text())].map((row) => row.fields);
    const header = rows[0] as string[];
    const col = (name: string) => header.indexOf(name);
    const checkpointRow = rows.find((row) => row[0] === 'checkpoint') as string[];
    const signed = checkpointOf(checkpointRow[col('checkpoint')] as string);
    const eventRows = rows.filter((row) => row[0] === 'event');
    expect(eventRows).toHaveLength(signed.size);
    for (const row of eventRows) {
      const leaf = leafHash(leafInputOf(row[col('hash')] as string));
      const path = (row[col('audit_path')] as string).split(' ').filter(Boolean).map(hex);
      expect(verifyInclusion(Number(row[col('leaf_index')]), signed.size, leaf, path, hex(signed.root))).toBe(true);
    }
  });
});

describe('the offline auditor reads the file as the text it is', () => {
  it('refuses an export whose JSON names a member twice: a forged history first, the genuine one last', async () => {
    // COMPLIANCE.md "Auditing an export": the auditors "read it as hostile input"; "an event whose members
    // are not what the service writes ... cannot be checked and makes the export invalid". The service
    // never writes a member twice. A reader that takes the first of duplicate members (or a person
    // reading the file) sees the forged history; JSON.parse and Python's json keep the last one.
    const genuine = await exportOf(brand.key, objectA.id);
    const keys = await jwks();
    expect(auditExport(genuine, keys)).toMatchObject({ valid: true });
    const forgedEvents = structuredClone(genuine.events).slice(0, 3);
    for (const event of forgedEvents) (event.data as Json).evidence = { note: 'FORGED: lot withdrawn, no provenance' };
    const text = JSON.stringify(genuine);
    const at = text.indexOf('"events":[');
    const duplicated = `${text.slice(0, at)}"events":${JSON.stringify(forgedEvents)},${text.slice(at)}`;
    // Inside an event too: a condition-report note said twice, the first one rewritten.
    const inner = text.replace('"evidence":{"note":"A-3"}', '"evidence":{"note":"A-3 (rewritten: damaged dial)","note":"A-3"}');
    expect(inner).not.toBe(text);
    const exportPath = join(folder, 'duplicate-events.json');
    const innerPath = join(folder, 'duplicate-note.json');
    const jwksPath = join(folder, 'jwks.json');
    await writeFile(exportPath, duplicated);
    await writeFile(innerPath, inner);
    await writeFile(jwksPath, JSON.stringify(keys));

    const verdicts: Record<string, unknown> = {};
    for (const [name, path] of [
      ['events twice', exportPath],
      ['a note twice', innerPath],
    ] as const) {
      const cli = await runChild(process.execPath, [cliPath, 'audit', path, '--jwks', jwksPath]);
      verdicts[`hallmark audit: ${name}`] = cli.code;
      const script = [
        'import json, sys',
        `sys.path.insert(0, ${JSON.stringify(pythonClient)})`,
        'from hallmark.offline import audit_export',
        // The file's text, as docs/COMPLIANCE.md asks (json.load keeps the last of two members).
        `document = open(${JSON.stringify(path)}, encoding="utf-8").read()`,
        `jwks = json.load(open(${JSON.stringify(jwksPath)}, encoding="utf-8"))`,
        'print(json.dumps({"valid": audit_export(document, jwks).valid}))',
      ].join('\n');
      const py = await runChild('/usr/bin/python3', ['-c', script]);
      verdicts[`python audit_export: ${name}`] = py.code === 0 ? JSON.parse(py.stdout).valid : `error ${py.stderr.slice(0, 200)}`;
    }
    expect(verdicts).toEqual({
      'hallmark audit: events twice': 1,
      'python audit_export: events twice': false,
      'hallmark audit: a note twice': 1,
      'python audit_export: a note twice': false,
    });
  });
});

describe('an export that fails part-way', () => {
  it('never ends as a clean, complete-looking download: the client sees the transfer fail, or a whole export that audits', async () => {
    // COMPLIANCE.md "Exports": the gateway streams pages; "the export is signed by its checkpoint ...
    // changing, dropping or adding any event breaks a proof or the count". A page that fails after the
    // first must not leave the auditor a file that ends like a finished one. Fault: the asset's stored
    // nodes go missing while the export is under way (what a later page reads its proofs from).
    const object = await register(brand.key, 'Part-way export');
    for (let index = 0; index < 130; index++) {
      const recorded = await api('POST', '/auction/provenance/events', {
        key: brand.key,
        body: {
          objectId: object.id,
          eventType: 'cataloged',
          actorRole: 'auction_house',
          evidence: { report: `${'€'.repeat(5_000)}-${index}` },
        },
      });
      expect(recorded.status).toBe(201);
    }
    await waitFor('the projected object', async () => {
      const root = await api('GET', `/compliance/${object.id}/merkle/root`, { key: brand.key });
      return root.body.treeSize === 131 ? root : undefined;
    });
    const response = await fetch(`${t.url}/api/v1/compliance/${object.id}/export?format=json`, {
      headers: { 'x-api-key': brand.key },
    });
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const chunks: Uint8Array[] = [];
    const first = await reader.read();
    if (first.value) chunks.push(first.value);
    await t.product.db.query('DELETE FROM merkle_nodes WHERE asset_id = $1', [object.id]);
    let failed: unknown;
    try {
      for (;;) {
        const next = await reader.read();
        if (next.done) break;
        chunks.push(next.value);
      }
    } catch (error) {
      failed = error;
    }
    if (failed === undefined) {
      // The transfer ended cleanly: then it must be a whole export that audits valid.
      const text = Buffer.concat(chunks).toString('utf8');
      let document: Export | undefined;
      try {
        document = JSON.parse(text) as Export;
      } catch {
        document = undefined;
      }
      expect(document, `a clean end after ${text.length} bytes of an incomplete JSON export: …${text.slice(-120)}`).toBeDefined();
      expect(auditExport(document as Export, await jwks())).toMatchObject({ valid: true, treeSize: 131 });
    }
  }, 90_000);
});

describe('a stop right after acknowledged writes', () => {
  it('projects every acknowledged event after the restart, to the tree that extends every checkpoint signed before', async () => {
    const before = await api('GET', `/compliance/${objectA.id}/merkle/root`, { key: brand.key });
    expect(before.status).toBe(200);
    const signedBefore = checkpointOf(before.body.checkpoint.note);
    // Acknowledged writes, then a stop within the projection's 100 ms linger.
    for (let index = 0; index < 6; index++) {
      await record(brand.key, objectA.id, `crash-${index}`);
    }
    t = await restartTestProduct(t);
    const after = await exportOf(brand.key, objectA.id);
    expect(after.treeSize).toBe(signedBefore.size + 6);
    const leaves = leavesOf(after);
    expect(after.rootHash).toBe(referenceRoot(leaves).toString('hex'));
    expect(checkpointOf(after.checkpoint?.note ?? '').root).toBe(referenceRoot(leaves).toString('hex'));
    const consistency = await api('GET', `/compliance/${objectA.id}/merkle/consistency?from=${signedBefore.size}`, {
      key: brand.key,
    });
    expect(consistency.status).toBe(200);
    expect(consistency.body.fromRootHash).toBe(signedBefore.root);
    expect(
      verifyConsistency(
        signedBefore.size,
        after.treeSize,
        hex(signedBefore.root),
        hex(checkpointOf(consistency.body.checkpoint.note).root),
        (consistency.body.proof as string[]).map(hex),
      ),
    ).toBe(true);
    expect(auditExport(after, await jwks())).toMatchObject({ valid: true, problems: [] });
  });
});

describe('hallmark projections rebuild', () => {
  it('gives back the same roots, leaf indexes, proofs and aliases; evidence pulled before still audits and is extended by the tree after', async () => {
    const assets: Array<{ key: string; id: string; serial?: string }> = [
      { key: brand.key, id: objectA.id, serial: objectA.service_serial },
      { key: brand.key, id: objectB.id, serial: objectB.service_serial },
      { key: rival.key, id: objectR.id, serial: objectR.service_serial },
      { key: brand.key, id: codeAsset },
    ];
    const before = new Map<string, Awaited<ReturnType<typeof snapshot>>>();
    for (const asset of assets) before.set(asset.id, await snapshot(asset.key, asset.id));

    await t.stopKeepingData();
    const rebuilt = await runHallmark(t.dataDir, {}, ['projections', 'rebuild']);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    t = await restartTestProduct(t);
    const keys = await jwks();

    for (const asset of assets) {
      const old = before.get(asset.id) as Awaited<ReturnType<typeof snapshot>>;
      const now = await snapshot(asset.key, asset.id);
      expect({ treeSize: now.treeSize, rootHash: now.rootHash }, asset.id).toEqual({
        treeSize: old.treeSize,
        rootHash: old.rootHash,
      });
      expect(now.proofs, asset.id).toEqual(old.proofs);
      // By serial too (the alias comes back from the `registered` event).
      if (asset.serial) {
        const bySerial = await api('GET', `/compliance/${asset.serial}/merkle/root`, { key: asset.key });
        expect(bySerial.status, asset.serial).toBe(200);
        expect(bySerial.body.rootHash).toBe(old.rootHash);
      }
      // The chain check finds the log in agreement with the store.
      const verified = await api('GET', `/compliance/${asset.id}/verify`, { key: asset.key });
      expect(verified.body, asset.id).toMatchObject({ isValid: true, eventCount: old.treeSize });
      // The export pulled before the rebuild still audits, and a checkpoint now is not dated before it.
      expect(auditExport(old.document, keys), asset.id).toMatchObject({ valid: true, problems: [] });
      const signedBefore = checkpointOf(old.note);
      const signedAfter = checkpointOf(now.note);
      expect(Date.parse(signedAfter.signedAt as string)).toBeGreaterThanOrEqual(Date.parse(signedBefore.signedAt as string));
      // Another tenant still sees nothing of it, as of an unknown asset.
      const other = asset.key === brand.key ? rival.key : brand.key;
      expect((await api('GET', `/compliance/${asset.id}/merkle/root`, { key: other })).status).toBe(404);
    }

    // The history grows after the rebuild: the tree extends the checkpoint signed before it.
    const oldA = before.get(objectA.id) as Awaited<ReturnType<typeof snapshot>>;
    const signed = checkpointOf(oldA.note);
    await record(brand.key, objectA.id, 'after-rebuild', 'listed');
    const grown = await waitFor('the grown tree', async () => {
      const root = await api('GET', `/compliance/${objectA.id}/merkle/root`, { key: brand.key });
      return root.status === 200 && root.body.treeSize === signed.size + 1 ? root : undefined;
    });
    const consistency = await api('GET', `/compliance/${objectA.id}/merkle/consistency?from=${signed.size}`, {
      key: brand.key,
    });
    expect(consistency.body.fromRootHash).toBe(signed.root);
    expect(
      verifyConsistency(
        signed.size,
        signed.size + 1,
        hex(signed.root),
        hex(checkpointOf(grown.body.checkpoint.note).root),
        (consistency.body.proof as string[]).map(hex),
      ),
    ).toBe(true);
    const grownExport = await exportOf(brand.key, objectA.id);
    expect(grownExport.rootHash).toBe(referenceRoot(leavesOf(grownExport)).toString('hex'));
    expect(auditExport(grownExport, keys)).toMatchObject({ valid: true, problems: [] });
    // What an auditor holding both exports checks (historyGrew, @hallmark/sdk/offline): the proof leads
    // from the earlier report's signed root to the later one's; swapped, another asset's report, or a
    // node of the proof changed, it does not.
    const earlierReport = auditExport(oldA.document, keys);
    const laterReport = auditExport(grownExport, keys);
    const proof = consistency.body.proof as string[];
    expect(historyGrew(earlierReport, laterReport, proof)).toBe(true);
    expect(historyGrew(laterReport, earlierReport, proof)).toBe(false);
    const otherAsset = auditExport((before.get(objectB.id) as Awaited<ReturnType<typeof snapshot>>).document, keys);
    expect(otherAsset.valid).toBe(true);
    expect(historyGrew(otherAsset, laterReport, proof)).toBe(false);
    expect(
      historyGrew(
        earlierReport,
        laterReport,
        proof.map((node, i) => (i === 0 ? `${node.slice(0, -1)}${node.endsWith('0') ? '1' : '0'}` : node)),
      ),
    ).toBe(false);
    expect(historyGrew({ ...earlierReport, valid: false }, laterReport, proof)).toBe(false);
  }, 150_000);
});

describe('a signing key rotated out (the remedy for a leaked key)', () => {
  it('signs no checkpoint the offline auditor takes after the rotation: a history forged with the old key is refused', async () => {
    // SECURITY.md: "A leaked signing key is contained by rotating it"; "On a suspected leak rotate the
    // key (POST /keys/signing/rotate)"; "nor can a brand rewrite its own history". COMPLIANCE.md: the
    // service "signs only its current tree", with its active key; after the rotation the old key signs
    // nothing. A checkpoint under the old key dated after the rotation is therefore a forgery by
    // whoever holds the leaked key, and the audit of an export that names it must not say valid.
    const genuine = await exportOf(brand.key, objectA.id);
    const oldKid = genuine.checkpoint?.keyId as string;
    const rotated = await api('POST', '/keys/signing/rotate', { key: brand.key });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    const after = await api('GET', `/compliance/${objectA.id}/merkle/root`, { key: brand.key });
    expect(after.body.checkpoint.keyId).not.toBe(oldKid);
    const rotatedAt = checkpointOf(after.body.checkpoint.note).signedAt as string;

    // The thief holds the old key's private half (taken here from the data folder).
    const masterKey = parseMasterKey(await readFile(join(t.dataDir, 'master.key'), 'utf8'));
    const [row] = await t.product.db.query<{ public_key: string; sealed_private_key: string }>(
      'SELECT public_key, sealed_private_key FROM verification_keys WHERE id = $1',
      [oldKid],
    );
    const publicKey = Buffer.from(row?.public_key ?? '', 'base64url');
    const privateKey = ed25519PrivateKeyObject({
      publicKey,
      privateKey: open(masterKey, Buffer.from(row?.sealed_private_key ?? '', 'base64url'), `hallmark:signing-key:${oldKid}`),
    });

    // The condition note of event 3 rewritten, the chain and the tree recomputed, signed ten minutes
    // after the rotation (the key set says when the key was retired; a minute's grace covers replicas
    // that learn of a rotation late).
    const forged = structuredClone(genuine);
    (forged.events[2]?.data as Json).evidence = { note: 'FORGED after the rotation' };
    let prevHash: string | null = (forged.events[1] as Export['events'][number]).hash;
    for (const event of forged.events.slice(2)) {
      event.prevHash = prevHash;
      event.hash = hashProvenanceRecord({
        assetId: forged.assetId,
        accountId: forged.owner.accountId,
        environment: forged.owner.environment as 'live' | 'test',
        sequence: event.sequence,
        type: event.type,
        occurredAt: event.occurredAt,
        data: event.data,
        prevHash,
      });
      prevHash = event.hash;
    }
    const leaves = forged.events.map((event) => leafHash(leafInputOf(event.hash)));
    forged.events.forEach((event, index) => {
      event.leafHash = (leaves[index] as Buffer).toString('hex');
      event.auditPath = referenceInclusionProof(index, leaves).map((node) => node.toString('hex'));
    });
    forged.rootHash = referenceRoot(leaves).toString('hex');
    const note = genuine.checkpoint?.note as string;
    const keyName = (/^\u2014 (\S+) /m.exec(note)?.[1] ?? '') as string;
    forged.checkpoint = {
      ...(genuine.checkpoint as NonNullable<Export['checkpoint']>),
      note: signCheckpoint(
        {
          origin: note.split('\n')[0] as string,
          treeSize: leaves.length,
          rootHash: referenceRoot(leaves),
          signedAt: new Date(Date.parse(rotatedAt) + 600_000),
        },
        { name: keyName, publicKey, sign: (message) => signEd25519(privateKey, message) },
      ),
    };
    const keys = await jwks();
    expect(auditExport(genuine, keys)).toMatchObject({ valid: true });
    const report = auditExport(forged, keys);
    expect({ valid: report.valid, checkpointSignedAt: report.checkpointSignedAt }).toMatchObject({ valid: false });
  });
});
