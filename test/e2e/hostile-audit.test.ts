import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { auditExport, type ComplianceExportDocument, type JsonWebKeySet } from '@hallmark/client';
import { ed25519PrivateKeyObject, ed25519Thumbprint, generateEd25519KeyPair, signEd25519 } from '@hallmark/crypto';
import { leafHash, referenceInclusionProof, referenceRoot } from '@hallmark/merkle';
import { hashProvenanceRecord, leafInputOf, signCheckpoint } from '@hallmark/provenance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { ownerOfKey, publicKeyRegistration } from '../support/public-keys.ts';
import { waitFor } from '../support/wait.ts';

// A thief with a leaked TEST `*` key of a brand registers an Ed25519 public key of its own
// (POST /keys), then rewrites the history of one of the brand's LIVE assets and signs the
// checkpoint with it. The published key set names the key as the brand's, so an audit that asked
// only whose key it is said valid. Checkpoints are signed only by the service's signing key of the
// asset's account and environment: the audit (and `hallmark audit`) must refuse the forgery, and
// the brand's own registered key, which could rewrite its history alike, no less. Over real HTTP,
// embedded form.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const gtin = '09506000134352';
const cliPath = fileURLToPath(new URL('../../apps/hallmark/bin/hallmark.js', import.meta.url));

/** The export rewritten at will and re-chained, its checkpoint signed by `pair` under the kid the JWKS gives it. */
function forge(genuine: ComplianceExportDocument, pair: ReturnType<typeof generateEd25519KeyPair>): ComplianceExportDocument {
  const { assetId, owner } = genuine;
  const environment = owner.environment as 'live' | 'test';
  const kid = ed25519Thumbprint(pair.publicKey);
  const first = genuine.events[0] as ComplianceExportDocument['events'][number];
  const invented = [
    { type: first.type, occurredAt: first.occurredAt, data: first.data },
    { type: 'authenticated', occurredAt: new Date().toISOString(), data: { by: 'Fabricated Lab', grade: 'A+' } },
  ];
  let prevHash: string | null = null;
  const chained = invented.map((event, index) => {
    const sequence = index + 1;
    const hash = hashProvenanceRecord({ assetId, accountId: owner.accountId, environment, sequence, ...event, prevHash });
    const record = { eventId: `forged-${sequence}`, sequence, ...event, prevHash, hash };
    prevHash = hash;
    return record;
  });
  const leaves = chained.map((event) => leafHash(leafInputOf(event.hash)));
  const root = referenceRoot(leaves);
  const signedName = /^\u2014 (\S+) /m.exec(genuine.checkpoint?.note ?? '')?.[1] ?? '';
  const origin = (genuine.checkpoint?.note ?? '').split('\n')[0] as string;
  const privateKey = ed25519PrivateKeyObject(pair);
  const note = signCheckpoint(
    { origin, treeSize: leaves.length, rootHash: root },
    {
      name: `${signedName.slice(0, signedName.lastIndexOf('/keys/'))}/keys/${kid}`,
      publicKey: pair.publicKey,
      sign: (message) => signEd25519(privateKey, message),
    },
  );
  return {
    ...genuine,
    treeSize: leaves.length,
    rootHash: root.toString('hex'),
    checkpoint: { note, keyId: kid },
    events: chained.map((event, index) => ({
      ...event,
      leafIndex: index,
      leafHash: (leaves[index] as Buffer).toString('hex'),
      auditPath: referenceInclusionProof(index, leaves).map((node) => node.toString('hex')),
    })),
  };
}

describe('an audit against a history forged with a registered public key', () => {
  let test: TestProduct;
  let brand: { id: string; liveKey: string; testKey: string };
  let genuine: ComplianceExportDocument;
  const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
    call<Json>(test.url, method, `/api/v1${path}`, options);
  const register = async (key: string) => {
    const pair = generateEd25519KeyPair();
    const registered = await api('POST', '/keys', {
      key,
      body: publicKeyRegistration(pair, await ownerOfKey(test.url, key), 'my own signer'),
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    expect(registered.body.id).toBe(ed25519Thumbprint(pair.publicKey));
    return pair;
  };
  const jwks = async () => (await call(test.url, 'GET', '/.well-known/jwks.json')).body as unknown as JsonWebKeySet;

  beforeAll(async () => {
    test = await startTestProduct();
    const operatorKey = test.product.generatedOperatorKey as string;
    const created = await api('POST', '/accounts', { key: operatorKey, body: { name: 'Maison', tier: 'enterprise' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const liveKey = created.body.apiKey.secret as string;
    const grant = await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operatorKey, body: { gtin } });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    const sandbox = await api('POST', '/keys', { key: liveKey, body: { name: 'sandbox', scopes: ['*'], environment: 'test' } });
    expect(sandbox.status, JSON.stringify(sandbox.body)).toBe(201);
    brand = { id: created.body.account.id, liveKey, testKey: sandbox.body.secret };

    const code = await api('POST', '/code/generate', { key: liveKey, body: { gtin, serialNumber: 'VICTIM-1' } });
    expect(code.status, JSON.stringify(code.body)).toBe(201);
    genuine = await waitFor('the live asset’s export', async () => {
      const exported = await api('GET', `/compliance/${code.body.assetId}/export?format=json`, { key: liveKey });
      return exported.status === 200 ? (exported.body as unknown as ComplianceExportDocument) : undefined;
    });
    expect(genuine.owner).toEqual({ accountId: brand.id, environment: 'live' });
  }, 120_000);

  afterAll(async () => {
    await test?.stop();
  });

  it('publishes each key’s kind: the service’s signing key and the registered public key', async () => {
    const pair = await register(brand.testKey);
    const keys = (await jwks()).keys as Array<Json>;
    expect(keys.find((key) => key.kid === genuine.checkpoint?.keyId)).toMatchObject({
      hallmark_account: brand.id,
      hallmark_environment: 'live',
      hallmark_key_type: 'signing',
    });
    expect(keys.find((key) => key.kid === ed25519Thumbprint(pair.publicKey))).toMatchObject({
      hallmark_account: brand.id,
      hallmark_environment: 'test',
      hallmark_key_type: 'public',
    });
  });

  it('refuses a live history forged with a public key a leaked test `*` key registered; the genuine one passes', async () => {
    const pair = await register(brand.testKey);
    const forged = forge(genuine, pair);
    const keys = await jwks();
    expect(auditExport(genuine, keys)).toMatchObject({ valid: true, eventsChecked: genuine.events.length, problems: [] });
    const report = auditExport(forged, keys);
    expect(report).toMatchObject({ valid: false, treeSize: undefined, signedBy: undefined });
    expect(report.problems).toEqual([
      expect.stringContaining(`signed by key ${ed25519Thumbprint(pair.publicKey)}, a public key`),
    ]);
    // The same key published as a signing key of the test environment would be refused for its environment.
    const asTestSigningKey = {
      keys: keys.keys.map((key) => (key.kid === forged.checkpoint?.keyId ? { ...key, hallmark_key_type: 'signing' } : key)),
    };
    expect(auditExport(forged, asTestSigningKey).problems[0]).toContain("not by a key of the asset's environment live");

    // `hallmark audit` answers the same, exit code 1 for the forgery and 0 for the genuine export.
    const folder = await mkdtemp(join(tmpdir(), 'hallmark-hostile-audit-'));
    try {
      await writeFile(join(folder, 'jwks.json'), JSON.stringify(keys));
      await writeFile(join(folder, 'genuine.json'), JSON.stringify(genuine));
      await writeFile(join(folder, 'forged.json'), JSON.stringify(forged));
      const audit = (file: string) =>
        spawnSync(process.execPath, [cliPath, 'audit', join(folder, file), '--jwks', join(folder, 'jwks.json')], {
          encoding: 'utf8',
        });
      const good = audit('genuine.json');
      expect(good.status, good.stderr).toBe(0);
      const bad = audit('forged.json');
      expect(bad.status, bad.stderr).toBe(1);
      expect(JSON.parse(bad.stdout).problems[0]).toContain('a public key');
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('refuses a history the brand rewrote with a public key it registered live itself', async () => {
    const pair = await register(brand.liveKey);
    const report = auditExport(forge(genuine, pair), await jwks());
    expect(report.valid).toBe(false);
    expect(report.problems[0]).toContain(`signed by key ${ed25519Thumbprint(pair.publicKey)}, a public key`);
  });
});
