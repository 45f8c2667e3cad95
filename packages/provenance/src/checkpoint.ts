import { createHash, type KeyObject } from 'node:crypto';
import { verifyEd25519 } from '@hallmark/crypto';

/**
 * Signed checkpoints in the C2SP tlog-checkpoint format: a signed note whose text is the log's
 * origin, the tree size and the base64 root hash, one per line, then an extension line of ours,
 * `hallmark-signed-at <ISO 8601 UTC>`, signed with Ed25519.
 * https://c2sp.org/tlog-checkpoint and https://c2sp.org/signed-note
 *
 * The time is what makes a checkpoint a statement of the tree *then*: the service signs only its
 * current tree, so a checkpoint of an older size carries the time it was the current one, and an
 * export cut short with it shows how old it is.
 */
export interface Checkpoint {
  origin: string;
  treeSize: number;
  rootHash: Buffer;
  /** When the service signed it (the tree was then this size); absent on checkpoints signed before 2026-12-04. */
  signedAt?: Date;
}

const signedAtPrefix = 'hallmark-signed-at ';

export interface NoteSigner {
  /** The key's name in the signature line; no spaces, no `+`. */
  name: string;
  /** The raw 32-byte Ed25519 public key. */
  publicKey: Uint8Array;
  sign(message: Uint8Array): Buffer;
}

const signaturePrefix = '\u2014 ';

export function checkpointBody(checkpoint: Checkpoint): string {
  if (/[\n\r]/.test(checkpoint.origin) || checkpoint.origin.length === 0)
    throw new Error('A checkpoint origin is one non-empty line');
  const signedAt = checkpoint.signedAt ? `${signedAtPrefix}${checkpoint.signedAt.toISOString()}\n` : '';
  return `${checkpoint.origin}\n${checkpoint.treeSize}\n${checkpoint.rootHash.toString('base64')}\n${signedAt}`;
}

/** The signed note's 4-byte key hash for an Ed25519 key: SHA-256(name || "\n" || 0x01 || key)[:4]. */
export function noteKeyHash(name: string, publicKey: Uint8Array): Buffer {
  return createHash('sha256')
    .update(`${name}\n`)
    .update(Buffer.from([0x01]))
    .update(publicKey)
    .digest()
    .subarray(0, 4);
}

export function signCheckpoint(checkpoint: Checkpoint, signer: NoteSigner): string {
  const body = checkpointBody(checkpoint);
  const signature = signer.sign(Buffer.from(body, 'utf8'));
  const blob = Buffer.concat([noteKeyHash(signer.name, signer.publicKey), signature]).toString('base64');
  return `${body}\n${signaturePrefix}${signer.name} ${blob}\n`;
}

/** A signature line after its em dash: the key's name (printable ASCII), one space, the base64 of key hash and signature. */
const signatureLine = /^[!-~]+ [A-Za-z0-9+/]+={0,2}$/;
/** Signature lines a note may have (Go's note package takes at most 100). */
const maxSignatureLines = 100;

export interface NoteKey {
  name: string;
  publicKey: Uint8Array;
  keyObject: KeyObject;
}

export type CheckpointCheck = { ok: true; checkpoint: Checkpoint; signedBy: string } | { ok: false; reason: string };

/**
 * Verifies a signed checkpoint with the first signature line whose key `keyFor` knows, and only
 * then reads size and root from it: an unsigned size or root is never trusted.
 */
export function openSignedCheckpoint(note: string, keyFor: (name: string) => NoteKey | undefined): CheckpointCheck {
  const split = note.indexOf('\n\n');
  if (split < 0) return { ok: false, reason: 'The checkpoint has no signature block.' };
  const body = note.slice(0, split + 1);
  // Every line after the blank one is a signature, and the note ends with a newline, as the signed-note
  // format says (Go's note.Open refuses anything else): text after a good signature (a second,
  // unsigned checkpoint) is no part of what was signed, and is refused rather than passed over.
  const block = note.slice(split + 2);
  const signatureLines = block.endsWith('\n') ? block.slice(0, -1).split('\n') : [];
  if (signatureLines.length === 0 || signatureLines.length > maxSignatureLines) {
    return {
      ok: false,
      reason: `The checkpoint's signature block is not 1 to ${maxSignatureLines} lines ending with a newline.`,
    };
  }
  for (const line of signatureLines) {
    if (!line.startsWith(signaturePrefix)) return { ok: false, reason: 'A signature line does not start with an em dash.' };
    if (!signatureLine.test(line.slice(signaturePrefix.length))) return { ok: false, reason: 'A signature line is malformed.' };
  }
  for (const line of signatureLines) {
    // Each line matched signatureLine above: a name, one space, the blob.
    const [name, blob] = line.slice(signaturePrefix.length).split(' ') as [string, string];
    const key = keyFor(name);
    if (!key) continue;
    const bytes = Buffer.from(blob, 'base64');
    if (bytes.length !== 68 || !bytes.subarray(0, 4).equals(noteKeyHash(name, key.publicKey))) {
      return { ok: false, reason: `The signature by ${name} does not match its key.` };
    }
    if (!verifyEd25519(key.keyObject, Buffer.from(body, 'utf8'), bytes.subarray(4))) {
      return { ok: false, reason: `The signature by ${name} does not verify.` };
    }
    const parsed = parseCheckpointBody(body);
    return parsed ? { ok: true, checkpoint: parsed, signedBy: name } : { ok: false, reason: 'The checkpoint text is malformed.' };
  }
  return { ok: false, reason: 'No signature on the checkpoint is by a known key.' };
}

function parseCheckpointBody(body: string): Checkpoint | undefined {
  const [origin, size, root, ...extensions] = body.split('\n');
  if (!origin || !size || !root || !/^\d{1,16}$/.test(size)) return undefined;
  const treeSize = Number(size);
  const rootHash = Buffer.from(root, 'base64');
  if (!Number.isSafeInteger(treeSize) || rootHash.length !== 32 || rootHash.toString('base64') !== root) return undefined;
  // Extension lines (C2SP): ours is the signing time, at most once; others are not ours to read.
  const times = extensions.filter((line) => line.startsWith(signedAtPrefix)).map((line) => line.slice(signedAtPrefix.length));
  if (times.length > 1) return undefined;
  if (times.length === 0) return { origin, treeSize, rootHash };
  const signedAt = new Date(times[0] as string);
  if (Number.isNaN(signedAt.getTime()) || signedAt.toISOString() !== times[0]) return undefined;
  return { origin, treeSize, rootHash, signedAt };
}
