import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { ed25519Thumbprint } from '@hallmark/crypto';
import { leafHash, referenceInclusionProof, referenceRoot } from '@hallmark/merkle';
import { hashProvenanceRecord, leafInputOf, signCheckpoint } from '@hallmark/provenance';
import { describe, expect, it } from 'vitest';
import { auditExport, auditExportText, type ComplianceExportDocument } from './audit-export.ts';
import type { PublishedKey } from './verify-offline.ts';

// The service signs a checkpoint only with the owner's own signing key in the asset's environment
// (compliance-service's checkpoint-signer). Every other key the JWKS lists, even the owner's, vouches
// for nothing: a public key the account registered (a thief with a leaked test `*` key can register
// one), or the owner's signing key of the other environment. The end-to-end form is
// test/e2e/hostile-audit.test.ts.

const owner = { accountId: 'acc_brand', environment: 'live' };

function newKey() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x as string;
  return { x, kid: ed25519Thumbprint(Buffer.from(x, 'base64url')), privateKey };
}

/** A published key as keyring.jwks() writes it; `member` overrides or drops (undefined) members. */
function published(key: { x: string; kid: string }, members: Record<string, unknown> = {}): PublishedKey {
  const jwk: Record<string, unknown> = {
    kty: 'OKP',
    crv: 'Ed25519',
    x: key.x,
    kid: key.kid,
    alg: 'EdDSA',
    use: 'sig',
    hallmark_environment: 'live',
    hallmark_account: 'acc_brand',
    hallmark_key_type: 'signing',
    hallmark_gtins: ['09506000134352'],
    hallmark_gtin_prefixes: [],
    ...members,
  };
  for (const name of Object.keys(jwk)) if (jwk[name] === undefined) delete jwk[name];
  return jwk as PublishedKey;
}

/** An export of a history of the owner's asset whose checkpoint `signer` signed (as forge.ts builds it). */
function exportSignedBy(
  signer: { x: string; kid: string; privateKey: KeyObject },
  inputs: ReadonlyArray<{ type: string; data: Record<string, unknown> }> = [
    { type: 'code.generated', data: { gtin: '09506000134352' } },
    { type: 'authenticated', data: { by: 'Fabricated Lab', evidence: ['x'] } },
  ],
  signedAt?: Date,
): ComplianceExportDocument {
  const assetId = 'code_victim';
  let prevHash: string | null = null;
  const chained = inputs.map((input, index) => {
    const occurredAt = `2026-01-0${index + 1}T00:00:00.000Z`;
    const record = { assetId, ...owner, environment: 'live' as const, sequence: index + 1, ...input, occurredAt, prevHash };
    const event = {
      eventId: `ev${index}`,
      sequence: index + 1,
      ...input,
      occurredAt,
      prevHash,
      hash: hashProvenanceRecord(record),
    };
    prevHash = event.hash;
    return event;
  });
  const leaves = chained.map((event) => leafHash(leafInputOf(event.hash)));
  const root = referenceRoot(leaves);
  const note = signCheckpoint(
    { origin: `hallmark/assets/${assetId}`, treeSize: leaves.length, rootHash: root, ...(signedAt ? { signedAt } : {}) },
    {
      name: `hallmark/keys/${signer.kid}`,
      publicKey: Buffer.from(signer.x, 'base64url'),
      sign: (message) => sign(null, message, signer.privateKey),
    },
  );
  return {
    format: 'hallmark.compliance-export/1',
    assetId,
    owner,
    treeSize: leaves.length,
    rootHash: root.toString('hex'),
    checkpoint: { note, keyId: signer.kid },
    events: chained.map((event, index) => ({
      ...event,
      leafIndex: index,
      leafHash: (leaves[index] as Buffer).toString('hex'),
      auditPath: referenceInclusionProof(index, leaves).map((node) => node.toString('hex')),
    })),
  };
}

describe('auditExport: which key may sign a checkpoint', () => {
  const serviceKey = newKey();
  const genuine = exportSignedBy(serviceKey);

  it('accepts the checkpoint signed by the owner’s signing key of the asset’s environment', () => {
    expect(auditExport(genuine, { keys: [published(serviceKey)] })).toMatchObject({
      valid: true,
      // Whose history, and of which environment: what an auditor compares with the one expected.
      owner: { accountId: 'acc_brand', environment: 'live' },
      treeSize: 2,
      eventsChecked: 2,
      problems: [],
    });
  });

  it('refuses a checkpoint signed by a public key the same account registered', () => {
    const registered = newKey();
    const keys = [published(serviceKey), published(registered, { hallmark_key_type: 'public' })];
    const report = auditExport(exportSignedBy(registered), { keys });
    expect(report.valid).toBe(false);
    expect(report.problems).toEqual([expect.stringContaining(`signed by key ${registered.kid}, a public key`)]);
    expect(report.treeSize).toBeUndefined();
  });

  it('refuses a checkpoint signed by the owner’s signing key of the other environment', () => {
    const testKey = newKey();
    const keys = [published(serviceKey), published(testKey, { hallmark_environment: 'test' })];
    const report = auditExport(exportSignedBy(testKey), { keys });
    expect(report.valid).toBe(false);
    expect(report.problems).toEqual([expect.stringMatching(/of the test environment, not .*environment live/)]);
  });

  it('refuses a key set that does not say what kind each key is, naming the member', () => {
    const report = auditExport(genuine, { keys: [published(serviceKey, { hallmark_key_type: undefined })] });
    expect(report.valid).toBe(false);
    expect(report.problems).toEqual([expect.stringContaining('no hallmark_key_type')]);
  });

  it('still refuses a signing key of another account, naming it', () => {
    const report = auditExport(genuine, { keys: [published(serviceKey, { hallmark_account: 'acc_other' })] });
    expect(report.problems).toEqual([expect.stringContaining('of account acc_other, not by a key of the asset')]);
  });
});

describe('auditExport of an export as it arrived (`hallmark audit`, the SDK): what JSON.parse may hand over', () => {
  const serviceKey = newKey();
  const jwks = { keys: [published(serviceKey)] };
  const signedExport = () =>
    exportSignedBy(
      serviceKey,
      ['code.generated', 'scanned', 'shipped'].map((type, step) => ({ type, data: { step } })),
    );
  /** The export with its second event replaced by `event`, as JSON.parse could hand it over. */
  const withSecondEvent = (event: unknown): ComplianceExportDocument => {
    const spoilt = signedExport();
    (spoilt.events as unknown[])[1] = event;
    return spoilt;
  };

  it('passes a genuine export', () => {
    expect(auditExport(signedExport(), jwks)).toMatchObject({ valid: true, eventsChecked: 3, problems: [], owner });
  });

  it.each([
    ['a string', 'x', 'is not an event but a string'],
    ['null', null, 'is not an event but null'],
    ['an array', [], 'is not an event but an array'],
  ])('reports an event that is %s as a problem instead of throwing', (_what, event, why) => {
    const report = auditExport(withSecondEvent(event), jwks);
    expect(report.valid).toBe(false);
    expect(report.problems).toContain(`Event 2: ${why}; it cannot be checked.`);
    // The events around it are still checked: the third's prevHash names a hash nobody can read.
    expect(report.problems).toEqual([
      `Event 2: ${why}; it cannot be checked.`,
      expect.stringMatching(/^Event 3 \(ev2\): prevHash does not match/),
    ]);
    expect(report).toMatchObject({ treeSize: 3, eventsChecked: 3, owner });
  });

  it('reports an event whose members are missing or of another type', () => {
    const event = { ...signedExport().events[1], auditPath: 'not a list', hash: 7 };
    delete (event as Partial<typeof event>).data;
    const report = auditExport(withSecondEvent(event), jwks);
    expect(report.valid).toBe(false);
    expect(report.problems[0]).toBe(
      'Event 2: data is not an object, hash is not a string, auditPath is not an array of at most 64 hashes (64 lowercase hex digits each); it cannot be checked.',
    );
  });

  it('reports an export without a list of events, or without an owner, instead of throwing', () => {
    const noEvents = { ...signedExport(), events: 'none' } as unknown as ComplianceExportDocument;
    expect(auditExport(noEvents, jwks).problems).toEqual([
      'The export has no list of events.',
      'The checkpoint covers 3 events; the export holds 0.',
    ]);
    const noOwner = { ...signedExport(), owner: undefined } as unknown as ComplianceExportDocument;
    const report = auditExport(noOwner, jwks);
    expect(report).toMatchObject({ valid: false, owner: undefined });
    expect(report.problems[0]).toMatch(/^Checkpoint: signed by key .* not by a key of the asset's account/);
    // JSON.parse makes a lone surrogate of "\ud800", which no canonical JSON holds.
    const surrogate = withSecondEvent({ ...signedExport().events[1], data: { note: '\ud800' } });
    expect(auditExport(surrogate, jwks)).toMatchObject({ valid: false, problems: [expect.stringMatching(/lone surrogate/)] });
  });
});

describe('auditExport: a signing key rotated out (hallmark_retired_at)', () => {
  const key = newKey();
  const retiredAt = '2026-12-05T12:00:00.000Z';
  const signedAt = (iso: string) => exportSignedBy(key, undefined, new Date(iso));
  const jwks = { keys: [published(key, { hallmark_retired_at: retiredAt })] };

  it('takes a checkpoint it dated before its retirement, or within the minute after', () => {
    expect(auditExport(signedAt('2026-12-05T11:00:00.000Z'), jwks)).toMatchObject({ valid: true });
    expect(auditExport(signedAt('2026-12-05T12:00:59.000Z'), jwks)).toMatchObject({ valid: true });
  });

  it('refuses one dated later, or undated, and a retirement time that is not one', () => {
    expect(auditExport(signedAt('2026-12-05T12:10:00.000Z'), jwks).problems).toEqual([
      `Checkpoint: signed at 2026-12-05T12:10:00.000Z by key ${key.kid}, retired at ${retiredAt}: the service signs with its active key only.`,
    ]);
    expect(auditExport(exportSignedBy(key), jwks).problems).toEqual([
      `Checkpoint: key ${key.kid} was retired at ${retiredAt} and the checkpoint gives no time: it cannot be told from one made after.`,
    ]);
    const badTime = { keys: [published(key, { hallmark_retired_at: 'noon' })] };
    expect(auditExport(signedAt('2026-12-05T11:00:00.000Z'), badTime).problems).toEqual([
      `Checkpoint: the key set gives key ${key.kid} a retirement time that is not a time.`,
    ]);
  });
});

describe('auditExportText: the export as the text of its file', () => {
  const key = newKey();
  const jwks = { keys: [published(key)] };
  const text = JSON.stringify(exportSignedBy(key));

  it('audits the text as auditExport audits what it parses to', () => {
    expect(auditExportText(text, jwks)).toEqual(auditExport(JSON.parse(text), jwks));
    expect(auditExportText('{"assetId":', jwks)).toMatchObject({ valid: false, problems: ['The export is not JSON.'] });
  });

  it('refuses a file that names a member twice in one object, whichever one JSON.parse keeps', () => {
    const twice = text.replace('"assetId":"code_victim"', '"assetId":"code_other","assetId":"code_victim"');
    expect(twice).not.toBe(text);
    const report = auditExportText(twice, jwks);
    expect(report.valid).toBe(false);
    expect(report.problems[0]).toBe(
      'The file names the member "assetId" twice in one object: readers disagree on which one counts.',
    );
  });
});
