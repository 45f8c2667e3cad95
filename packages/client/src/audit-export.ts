import type { Environment } from '@hallmark/contracts';
import { ed25519PublicKeyObject } from '@hallmark/crypto';
import { leafHash, verifyInclusion } from '@hallmark/merkle';
import { hashProvenanceRecord, leafInputOf, openSignedCheckpoint } from '@hallmark/provenance';
import type { JsonWebKeySet } from './verify-offline.ts';

/** The parts of a compliance export (GET /compliance/{assetId}/export?format=json) the audit reads. */
export interface ComplianceExportDocument {
  format: string;
  assetId: string;
  owner: { accountId: string; environment: string };
  treeSize: number;
  rootHash: string;
  checkpoint?: { note: string; keyId: string };
  events: Array<{
    eventId: string;
    sequence: number;
    type: string;
    occurredAt: string;
    data: Record<string, unknown>;
    prevHash: string | null;
    hash: string;
    leafIndex: number;
    leafHash: string;
    auditPath: string[];
  }>;
}

export interface AuditReport {
  valid: boolean;
  assetId: string;
  /** From the verified checkpoint only; undefined when it did not verify. */
  treeSize: number | undefined;
  rootHash: string | undefined;
  signedBy: string | undefined;
  eventsChecked: number;
  /** Each problem found, with the event it concerns; empty when valid. */
  problems: string[];
}

const maxProblems = 100;

/**
 * Verifies an export with no server (docs/COMPLIANCE.md, "Auditing an export"): the checkpoint's
 * signature under a key of the set that belongs to the asset's account (`hallmark_account`); then, against the size and root read from that signed
 * checkpoint (never the unsigned copies), every event's hash, its link to the one before, its leaf
 * and its inclusion proof, and that the events are exactly the tree's leaves.
 */
export function auditExport(document: ComplianceExportDocument, jwks: JsonWebKeySet): AuditReport {
  const problems: string[] = [];
  const problem = (text: string) => {
    if (problems.length < maxProblems) problems.push(text);
  };
  const report = (treeSize?: number, rootHash?: string, signedBy?: string, eventsChecked = 0): AuditReport => ({
    valid: problems.length === 0,
    assetId: document.assetId,
    treeSize,
    rootHash,
    signedBy,
    eventsChecked,
    problems,
  });

  if (document.format !== 'hallmark.compliance-export/1') problem(`Unknown export format ${JSON.stringify(document.format)}.`);
  if (!document.checkpoint?.note) {
    problem('The export carries no signed checkpoint.');
    return report();
  }
  let foreignKey: { kid: string; account: string | undefined } | undefined;
  const opened = openSignedCheckpoint(document.checkpoint.note, (name) => {
    const kid = name.slice(name.lastIndexOf('/keys/') + '/keys/'.length);
    const jwk = jwks.keys.find((key) => key.kid === kid && key.kty === 'OKP' && key.crv === 'Ed25519' && key.x);
    if (!jwk) return undefined;
    // Only a key of the asset's own account may sign its checkpoint (the account is in every event's hash).
    if (jwk.hallmark_account !== document.owner.accountId) {
      foreignKey = { kid, account: jwk.hallmark_account };
      return undefined;
    }
    const publicKey = Buffer.from(jwk.x as string, 'base64url');
    return publicKey.length === 32 ? { name, publicKey, keyObject: ed25519PublicKeyObject(publicKey) } : undefined;
  });
  if (!opened.ok) {
    problem(
      foreignKey
        ? `Checkpoint: signed by key ${foreignKey.kid} of ${
            foreignKey.account ? `account ${foreignKey.account}` : 'an unnamed account (the key set has no hallmark_account)'
          }, not by a key of the asset's account ${document.owner.accountId}.`
        : `Checkpoint: ${opened.reason}`,
    );
    return report();
  }
  const { treeSize, rootHash, origin } = opened.checkpoint;
  if (!origin.endsWith(`/assets/${document.assetId}`)) problem(`The checkpoint is for ${origin}, not asset ${document.assetId}.`);
  if (document.treeSize !== treeSize || document.rootHash !== rootHash.toString('hex')) {
    problem('The unsigned treeSize or rootHash differs from the signed checkpoint; the checkpoint’s values were used.');
  }
  if (document.events.length !== treeSize) {
    problem(`The checkpoint covers ${treeSize} events; the export holds ${document.events.length}.`);
  }

  let previousHash: string | null = null;
  document.events.forEach((event, index) => {
    const where = `Event ${index + 1} (${event.eventId})`;
    if (event.leafIndex !== index || event.sequence !== index + 1) problem(`${where}: out of order (leaf ${event.leafIndex}).`);
    const hash = hashProvenanceRecord({
      assetId: document.assetId,
      accountId: document.owner.accountId,
      environment: document.owner.environment as Environment,
      sequence: event.sequence,
      type: event.type,
      occurredAt: event.occurredAt,
      data: event.data,
      prevHash: event.prevHash,
    });
    if (hash !== event.hash) problem(`${where}: its content does not hash to ${event.hash}.`);
    if (event.prevHash !== previousHash) problem(`${where}: prevHash does not match the previous event’s hash.`);
    previousHash = event.hash;
    const leaf = /^[0-9a-f]{64}$/.test(event.hash) ? leafHash(leafInputOf(event.hash)) : Buffer.alloc(0);
    if (leaf.toString('hex') !== event.leafHash) problem(`${where}: leafHash is not the leaf of its hash.`);
    const path = event.auditPath.map((node) => Buffer.from(node, 'hex'));
    if (!verifyInclusion(event.leafIndex, treeSize, leaf, path, rootHash)) {
      problem(`${where}: its inclusion proof does not lead to the signed root.`);
    }
  });
  return report(treeSize, rootHash.toString('hex'), opened.signedBy, document.events.length);
}
