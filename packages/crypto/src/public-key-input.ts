import { createPublicKey } from 'node:crypto';

export type PublicKeyParseResult = { ok: true; publicKey: Buffer } | { ok: false; reason: string };

const base64url = /^[A-Za-z0-9_-]+$/;

/**
 * An Ed25519 public key as users paste it: 32 raw bytes in base64url (43 characters, no padding),
 * or a PEM "PUBLIC KEY" (SPKI). Anything else is refused with the reason.
 */
export function parseEd25519PublicKey(input: string): PublicKeyParseResult {
  const text = input.trim();
  if (text.startsWith('-----BEGIN')) {
    if (!text.startsWith('-----BEGIN PUBLIC KEY-----')) {
      return { ok: false, reason: 'a PEM key must be a "PUBLIC KEY" (SPKI) block' };
    }
    try {
      const key = createPublicKey({ key: text, format: 'pem' });
      if (key.asymmetricKeyType !== 'ed25519') {
        return { ok: false, reason: `the PEM key is ${key.asymmetricKeyType ?? 'not an asymmetric key'}, not Ed25519` };
      }
      return { ok: true, publicKey: Buffer.from(String(key.export({ format: 'jwk' }).x), 'base64url') };
    } catch {
      return { ok: false, reason: 'the PEM block does not hold a readable public key' };
    }
  }
  if (!base64url.test(text)) return { ok: false, reason: 'expected base64url (A–Z a–z 0–9 - _) or a PEM block' };
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.length !== 32 || bytes.toString('base64url') !== text) {
    return { ok: false, reason: `an Ed25519 public key is 32 bytes (43 base64url characters); got ${bytes.length} bytes` };
  }
  return { ok: true, publicKey: bytes };
}
