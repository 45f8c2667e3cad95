import type { Environment } from '@hallmark/contracts';
import { ed25519PublicKeyObject } from '@hallmark/crypto';
import { leafHash, verifyInclusion } from '@hallmark/merkle';
import { firstInexactNumber, hashProvenanceRecord, leafInputOf, openSignedCheckpoint } from '@hallmark/provenance';
import { firstRepeatedMember } from './repeated-member.ts';
import { retiredAtMs, retirementGraceMs } from './retired-key.ts';
import type { JsonWebKeySet, PublishedKey } from './verify-offline.ts';

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
  /**
   * The account and environment whose history this is, as the export names them: when `valid`,
   * the checkpoint's key and every event's hash vouch for them. An auditor compares them with the
   * brand and environment expected (a test history is not a live one).
   */
  owner: { accountId: string; environment: string } | undefined;
  /** From the verified checkpoint only; undefined when it did not verify. */
  treeSize: number | undefined;
  rootHash: string | undefined;
  signedBy: string | undefined;
  /**
   * When the service signed the checkpoint (ISO 8601), from the verified checkpoint: the history is
   * complete as of then, and the service signs only its current tree, so an export cut short shows an
   * older time. Demand a recent one. Undefined for checkpoints signed before 2026-12-04 (no time).
   */
  checkpointSignedAt: string | undefined;
  eventsChecked: number;
  /** Each problem found, with the event it concerns; empty when valid. */
  problems: string[];
}

const maxProblems = 100;
/** A hash as the export writes it. */
const hex64 = /^[0-9a-f]{64}$/;
/** The longest inclusion proof there is: a tree of 2^64 leaves is 64 levels high. */
const maxAuditPath = 64;

/**
 * Why a published key may not sign the checkpoint of an asset of `owner`, or undefined when it may.
 * The service signs checkpoints only with the owner's own signing key in the asset's environment
 * (compliance-service's checkpoint-signer): a key the account registered (its private half is the
 * account's, so it could rewrite its own history), a key of the other environment (a leaked test key
 * may register one) or of another account vouches for nothing.
 */
function whyNotCheckpointKey(
  jwk: PublishedKey & { hallmark_key_type?: string },
  kid: string,
  owner: ComplianceExportDocument['owner'],
): string | undefined {
  // The account is in every event's hash; a key of another account never signs this asset's tree.
  if (jwk.hallmark_account !== owner.accountId) {
    const whose = jwk.hallmark_account
      ? `account ${jwk.hallmark_account}`
      : 'an unnamed account (the key set has no hallmark_account)';
    return `signed by key ${kid} of ${whose}, not by a key of the asset's account ${owner.accountId}.`;
  }
  if (typeof jwk.hallmark_key_type !== 'string') {
    return `the key set does not say what kind of key ${kid} is (no hallmark_key_type); fetch a current one from /.well-known/jwks.json.`;
  }
  if (jwk.hallmark_key_type !== 'signing') {
    return `signed by key ${kid}, a ${jwk.hallmark_key_type} key (one the account registered and holds the private half of), not by a signing key the service holds for account ${owner.accountId}.`;
  }
  if (jwk.hallmark_environment !== owner.environment) {
    return `signed by key ${kid} of the ${jwk.hallmark_environment ?? 'unnamed'} environment, not by a key of the asset's environment ${owner.environment}.`;
  }
  return undefined;
}

/**
 * Why a checkpoint signed by `jwk` at `signedAt` cannot be the service's, when it cannot: the key was
 * retired (rotated out, `hallmark_retired_at`) before the time the checkpoint gives, past the grace,
 * or the checkpoint gives no time (whoever holds a retired key could date one after its retirement).
 * The service signs with the active key only, so such a checkpoint was made with a key that left it:
 * rotating a leaked key contains it for audits as well.
 */
function whyNotAfterRetirement(jwk: PublishedKey | undefined, signedAt: Date | undefined): string | undefined {
  const retiredMs = jwk ? retiredAtMs(jwk) : undefined;
  if (retiredMs === undefined) return undefined;
  const retiredAt = jwk?.hallmark_retired_at;
  if (Number.isNaN(retiredMs)) return `the key set gives key ${jwk?.kid} a retirement time that is not a time.`;
  if (!signedAt) {
    return `key ${jwk?.kid} was retired at ${retiredAt} and the checkpoint gives no time: it cannot be told from one made after.`;
  }
  if (signedAt.getTime() > retiredMs + retirementGraceMs) {
    return `signed at ${signedAt.toISOString()} by key ${jwk?.kid}, retired at ${retiredAt}: the service signs with its active key only.`;
  }
  return undefined;
}

/**
 * Verifies an export with no server (docs/COMPLIANCE.md, "Auditing an export"): the checkpoint's
 * signature under a service signing key (`hallmark_key_type: signing`) of the asset's account
 * (`hallmark_account`) and environment (`hallmark_environment`), so a key set without those members
 * fails; then, against the size and root read from that signed
 * checkpoint (never the unsigned copies), every event's hash, its link to the one before, its leaf
 * and its inclusion proof, and that the events are exactly the tree's leaves.
 */
function auditWellFormedExport(document: ComplianceExportDocument, jwks: JsonWebKeySet): AuditReport {
  const problems: string[] = [];
  const problem = (text: string) => {
    if (problems.length < maxProblems) problems.push(text);
  };
  const report = (treeSize?: number, rootHash?: string, signedBy?: string, eventsChecked = 0, signedAt?: Date): AuditReport => ({
    valid: problems.length === 0,
    assetId: document.assetId,
    owner: document.owner ? { accountId: document.owner.accountId, environment: document.owner.environment } : undefined,
    treeSize,
    rootHash,
    signedBy,
    checkpointSignedAt: signedAt?.toISOString(),
    eventsChecked,
    problems,
  });

  if (document.format !== 'hallmark.compliance-export/1') {
    problem(
      `Unknown export format ${typeof document.format === 'string' ? JSON.stringify(document.format) : 'of another type'}.`,
    );
  }
  if (!document.checkpoint?.note) {
    problem('The export carries no signed checkpoint.');
    return report();
  }
  // Why the key the checkpoint names may not sign it, when it may not.
  let refusal: string | undefined;
  const keysByName = new Map<string, PublishedKey>();
  const opened = openSignedCheckpoint(document.checkpoint.note, (name) => {
    const kid = name.slice(name.lastIndexOf('/keys/') + '/keys/'.length);
    const jwk = jwks.keys.find((key) => key.kid === kid && key.kty === 'OKP' && key.crv === 'Ed25519' && key.x);
    if (!jwk) return undefined;
    refusal = whyNotCheckpointKey(jwk, kid, document.owner);
    if (refusal) return undefined;
    keysByName.set(name, jwk);
    const publicKey = Buffer.from(jwk.x as string, 'base64url');
    return publicKey.length === 32 ? { name, publicKey, keyObject: ed25519PublicKeyObject(publicKey) } : undefined;
  });
  if (!opened.ok) {
    problem(`Checkpoint: ${refusal ?? opened.reason}`);
    return report();
  }
  const { treeSize, rootHash, origin } = opened.checkpoint;
  const retired = whyNotAfterRetirement(keysByName.get(opened.signedBy), opened.checkpoint.signedAt);
  if (retired) problem(`Checkpoint: ${retired}`);
  if (!origin.endsWith(`/assets/${document.assetId}`)) problem(`The checkpoint is for ${origin}, not asset ${document.assetId}.`);
  if (document.treeSize !== treeSize || document.rootHash !== rootHash.toString('hex')) {
    problem('The unsigned treeSize or rootHash differs from the signed checkpoint; the checkpoint’s values were used.');
  }
  if (document.events.length !== treeSize) {
    problem(`The checkpoint covers ${treeSize} events; the export holds ${document.events.length}.`);
  }

  let previousHash: string | null = null;
  // Events past the signed size are none of the tree's (said above): not worth a hash each.
  document.events.slice(0, treeSize).forEach((event, index) => {
    // An event that cannot be read is a problem of its own (auditExport); no hash of it carries on.
    if (event === unreadableEvent) {
      previousHash = null;
      return;
    }
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
  return report(
    treeSize,
    rootHash.toString('hex'),
    opened.signedBy,
    Math.min(document.events.length, treeSize),
    opened.checkpoint.signedAt,
  );
}

type ExportEvent = ComplianceExportDocument['events'][number];

/** What each member of an event the audit reads must be, as JSON. */
const eventMembers: ReadonlyArray<[keyof ExportEvent, (value: unknown) => boolean, string]> = [
  ['eventId', (value) => typeof value === 'string', 'a string'],
  ['sequence', (value) => Number.isSafeInteger(value), 'a whole number'],
  ['type', (value) => typeof value === 'string', 'a string'],
  ['occurredAt', (value) => typeof value === 'string', 'a string'],
  ['data', (value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'an object'],
  ['prevHash', (value) => value === null || typeof value === 'string', 'a string or null'],
  ['hash', (value) => typeof value === 'string', 'a string'],
  ['leafIndex', (value) => Number.isSafeInteger(value), 'a whole number'],
  ['leafHash', (value) => typeof value === 'string', 'a string'],
  // Checked before a node is decoded: Buffer.from(_, 'hex') keeps what it could read of a bad one,
  // and a path of 16 million nodes held gigabytes as Buffers.
  [
    'auditPath',
    (value) =>
      Array.isArray(value) && value.length <= maxAuditPath && value.every((node) => typeof node === 'string' && hex64.test(node)),
    `an array of at most ${maxAuditPath} hashes (64 lowercase hex digits each)`,
  ],
];

/** Why an export's event cannot be read (not an object, a member missing or of another type), or undefined. */
function whyNotAnEvent(event: unknown): string | undefined {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    return `is not an event but ${event === null ? 'null' : Array.isArray(event) ? 'an array' : `a ${typeof event}`}`;
  }
  const wrong = eventMembers.filter(([name, fits]) => !fits((event as Record<string, unknown>)[name]));
  return wrong.length === 0 ? undefined : wrong.map(([name, , what]) => `${name} is not ${what}`).join(', ');
}

/** What stands in for an event that cannot be read: the audit passes over it, and no hash of it carries on to the next event's `prevHash`. */
const unreadableEvent: ExportEvent = {
  eventId: '',
  sequence: -1,
  type: '',
  occurredAt: '',
  data: {},
  prevHash: null,
  hash: null as unknown as string,
  leafIndex: -1,
  leafHash: '',
  auditPath: [],
};

/**
 * Audits an export as it arrived (`hallmark audit`, the SDK's offline audit): an event it cannot read (`"x"`,
 * `null`, a member missing or of another type) is a problem of the report, which is then not valid,
 * rather than a TypeError thrown from the middle of the audit (as before 2026-12-03). Every other
 * event is checked as usual (auditWellFormedExport).
 */
export function auditExport(document: ComplianceExportDocument, jwks: JsonWebKeySet): AuditReport {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    return unauditable('', 'The export is not a JSON object.');
  }
  // Read as strings only: a 10,000-level array there overflowed the stack when made into text, and
  // its echo in the report grew with the square of its depth.
  if (typeof document.assetId !== 'string') return unauditable('', 'The export’s assetId is not a string.');
  const given: unknown = document.events;
  const events: unknown[] = Array.isArray(given) ? given : [];
  // Only the first maxProblems are kept: a 2 MB export of a million zeros was a 73 MB report.
  const unreadable = new Map<number, string>();
  let unreadableCount = 0;
  const checkable = events.map((event, index) => {
    const why = whyNotAnEvent(event);
    if (why === undefined) return event as ExportEvent;
    unreadableCount += 1;
    if (unreadable.size < maxProblems) unreadable.set(index, why);
    return unreadableEvent;
  });
  const owner = document.owner as Partial<ComplianceExportDocument['owner']> | undefined;
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const readable: ComplianceExportDocument = {
    ...document,
    owner: { accountId: text(owner?.accountId), environment: text(owner?.environment) },
    events: checkable,
  };
  const keys: unknown = (jwks as Partial<JsonWebKeySet> | undefined)?.keys;
  let report: AuditReport;
  try {
    report = auditWellFormedExport(readable, { keys: Array.isArray(keys) ? keys : [] });
  } catch (error) {
    // What JSON can hold but a hash cannot (a lone surrogate in a string): no exception either.
    return unauditable(String(document.assetId), `The export cannot be audited: ${(error as Error).message}.`);
  }
  const problems = [
    ...(Array.isArray(given) ? [] : ['The export has no list of events.']),
    ...[...unreadable].map(([index, why]) => `Event ${index + 1}: ${why}; it cannot be checked.`),
    ...(unreadableCount > unreadable.size ? [`${unreadableCount - unreadable.size} more events cannot be checked.`] : []),
    ...report.problems,
  ].slice(0, maxProblems + 1);
  return { ...report, owner: ownerNamed(owner), valid: problems.length === 0, problems };
}

/** The report on an export the audit could not go through. */
/**
 * `auditExport` of an export as the text of its file, which is what an auditor holds: the text must
 * be JSON, no object in it may name a member twice (JSON.parse keeps the last of two, other
 * readers and a person the first, so such a file says two histories; the service never writes one),
 * and no number may have another value than its double as JavaScript writes it (`…921`, or
 * `…921.000000001`, for the double `…920` hashes alike, while Python's json or a Decimal reader reads
 * it exactly). Prefer this to parsing the file yourself.
 */
export function auditExportText(text: string, jwks: JsonWebKeySet, parsed?: { document: unknown }): AuditReport {
  // `parsed`: the text as the caller parsed it already (a large export is not parsed twice).
  let document: unknown;
  try {
    document = parsed ? parsed.document : JSON.parse(text);
  } catch {
    return unauditable('', 'The export is not JSON.');
  }
  const report = auditExport(document as ComplianceExportDocument, jwks);
  const problems: string[] = [];
  const repeated = firstRepeatedMember(text);
  if (repeated !== undefined) {
    problems.push(
      `The file names the member ${JSON.stringify(repeated).slice(0, 100)} twice in one object: readers disagree on which one counts.`,
    );
  }
  // The service writes every number as JavaScript writes its double: another digit there hashes
  // alike (both read as one double) while a reader that keeps numbers exactly (Python's json for a
  // whole number, a Decimal reader, a person) sees it: `…921` or `…921.000000001` for `…920`.
  const inexact = firstInexactNumber(text);
  if (inexact !== undefined) {
    problems.push(
      `The file writes the number ${inexact.literal.slice(0, 40)} at ${inexact.path.slice(0, 100)}, which readers take for different values (the service would have written ${String(Number(inexact.literal)).slice(0, 40)}).`,
    );
  }
  if (problems.length === 0) return report;
  return { ...report, valid: false, problems: [...problems, ...report.problems].slice(0, maxProblems) };
}

function unauditable(assetId: string, problem: string): AuditReport {
  const nothing = {
    owner: undefined,
    treeSize: undefined,
    rootHash: undefined,
    signedBy: undefined,
    checkpointSignedAt: undefined,
  };
  return { ...nothing, valid: false, assetId, eventsChecked: 0, problems: [problem] };
}

/** The owner the export names, when it names both of its members. */
function ownerNamed(owner: Partial<ComplianceExportDocument['owner']> | undefined): AuditReport['owner'] {
  return typeof owner?.accountId === 'string' && typeof owner.environment === 'string'
    ? { accountId: owner.accountId, environment: owner.environment }
    : undefined;
}
