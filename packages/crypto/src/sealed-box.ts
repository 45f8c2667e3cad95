import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const version = 1;
const ivLength = 12;
const tagLength = 16;

/**
 * Encrypts with AES-256-GCM under a 32-byte key. `context` is authenticated but not stored: the
 * same context must be given to open, so a sealed value cannot be moved to another record.
 * Layout: version (1) | iv (12) | tag (16) | ciphertext.
 */
export function seal(key: Uint8Array, plaintext: Uint8Array, context: string): Buffer {
  if (key.length !== 32) throw new RangeError('AES-256-GCM needs a 32-byte key.');
  const iv = randomBytes(ivLength);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([version]), iv, cipher.getAuthTag(), ciphertext]);
}

/** Fails when the key or context is wrong or the box was altered. */
export function open(key: Uint8Array, box: Uint8Array, context: string): Buffer {
  if (box[0] !== version || box.length < 1 + ivLength + tagLength) throw new Error('Not a sealed box of a known version.');
  const iv = box.subarray(1, 1 + ivLength);
  const tag = box.subarray(1 + ivLength, 1 + ivLength + tagLength);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(box.subarray(1 + ivLength + tagLength)), decipher.final()]);
}

/** HALLMARK_MASTER_KEY: 64 hex characters or base64 of 32 bytes. */
export function parseMasterKey(text: string): Buffer {
  const trimmed = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (bytes.length !== 32) throw new RangeError('The master key must be 32 bytes: 64 hex characters or base64.');
  return bytes;
}
