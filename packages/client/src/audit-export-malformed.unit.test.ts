import { generateKeyPairSync, sign } from 'node:crypto';
import { ed25519Thumbprint } from '@hallmark/crypto';
import { leafHash, referenceInclusionProof, referenceRoot } from '@hallmark/merkle';
import { hashProvenanceRecord, leafInputOf, signCheckpoint } from '@hallmark/provenance';
import { describe, expect, it } from 'vitest';
import { auditExport, type ComplianceExportDocument } from './audit-export.ts';
import type { PublishedKey } from './verify-offline.ts';

// An export as compliance-service writes it, signed by the owner's live signing key; then spoilt.
// The audit of a well-formed export is audit-export.unit.test.ts's; here, what arrives malformed.

const owner = { accountId: 'acc_brand', environment: 'live' };
const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const x = publicKey.export({ format: 'jwk' }).x as string;
const kid = ed25519Thumbprint(Buffer.from(x, 'base64url'));
const jwks = {
  keys: [
    {
      kty: 'OKP',
      crv: 'Ed25519',
      x,
      kid,
      hallmark_account: owner.accountId,
      hallmark_environment: owner.environment,
      hallmark_key_type: 'signing',
    } as PublishedKey,
  ],
};

function signedExport(): ComplianceExportDocument {
  const assetId = 'code_1';
  let prevHash: string | null = null;
  const chained = ['code.generated', 'scanned', 'shipped'].map((type, index) => {
    const occurredAt = `2026-01-0${index + 1}T00:00:00.000Z`;
    const data = { step: index };
    const record = { assetId, ...owner, environment: 'live' as const, sequence: index + 1, type, occurredAt, data, prevHash };
    const event = {
      eventId: `ev${index}`,
      sequence: index + 1,
      type,
      occurredAt,
      data,
      prevHash,
      hash: hashProvenanceRecord(record),
    };
    prevHash = event.hash;
    return event;
  });
  const leaves = chained.map((event) => leafHash(leafInputOf(event.hash)));
  const root = referenceRoot(leaves);
  const note = signCheckpoint(
    { origin: `hallmark/assets/${assetId}`, treeSize: leaves.length, rootHash: root },
    { name: `hallmark/keys/${kid}`, publicKey: Buffer.from(x, 'base64url'), sign: (message) => sign(null, message, privateKey) },
  );
  return {
    format: 'hallmark.compliance-export/1',
    assetId,
    owner,
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

/** The export with its second event replaced by `event`, as JSON.parse could hand it over. */
function withSecondEvent(event: unknown): ComplianceExportDocument {
  const spoilt = signedExport();
  (spoilt.events as unknown[])[1] = event;
  return spoilt;
}

describe('auditExport of @hallmark/sdk/offline, on an export as it arrived', () => {
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
      'Event 2: data is not an object, hash is not a string, auditPath is not an array of strings; it cannot be checked.',
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
