import type { KeyObject } from 'node:crypto';
import { ed25519PublicKeyObject, signEd25519, verifyEd25519 } from './ed25519.ts';

/**
 * Proof that whoever registers an Ed25519 public key (`POST /keys` with `publicKey`) holds its
 * private half: the key's Ed25519 signature over the UTF-8 bytes of
 *
 *     hallmark-key-registration:<accountId>:<environment>:<publicKey>
 *
 * where `<publicKey>` is the base64url (no padding) of the key's 32 raw bytes, whatever form the
 * request gave it in, and `<environment>` is `live` or `test`: the account and environment the key
 * is registered for. The proof is that signature's 64 bytes in base64url (86 characters). Binding
 * the account and environment means a proof made for one registration is no proof for another
 * account's, nor for the other environment. The first word keeps it apart from a code's signed
 * message (`hallmark/code-signature/v1`, docs/SIGNING.md), so neither can pass for the other.
 * docs/SIGNING.md, "Registering a key: proof of possession", has a worked example.
 */
export function keyRegistrationMessage(accountId: string, environment: 'live' | 'test', publicKey: Uint8Array): Buffer {
  if (publicKey.length !== 32) throw new RangeError('An Ed25519 public key is 32 bytes.');
  return Buffer.from(
    `hallmark-key-registration:${accountId}:${environment}:${Buffer.from(publicKey).toString('base64url')}`,
    'utf8',
  );
}

/** The proof for registering `publicKey` (the private key's own public half) to this account and environment. */
export function signKeyRegistration(
  privateKey: KeyObject,
  registration: { accountId: string; environment: 'live' | 'test'; publicKey: Uint8Array },
): string {
  const message = keyRegistrationMessage(registration.accountId, registration.environment, registration.publicKey);
  return signEd25519(privateKey, message).toString('base64url');
}

const base64url = /^[A-Za-z0-9_-]{86}$/;

/**
 * True when `proof` is the public key's signature over its registration message for this account
 * and environment. False for anything else, including a proof that is not 86 base64url characters.
 */
export function verifyKeyRegistrationProof(registration: {
  accountId: string;
  environment: 'live' | 'test';
  publicKey: Uint8Array;
  proof: string;
}): boolean {
  if (!base64url.test(registration.proof)) return false;
  const signature = Buffer.from(registration.proof, 'base64url');
  // Only the canonical spelling: the last character's unused bits must be zero.
  if (signature.toString('base64url') !== registration.proof) return false;
  let publicKey: KeyObject;
  try {
    publicKey = ed25519PublicKeyObject(registration.publicKey);
  } catch {
    return false;
  }
  const message = keyRegistrationMessage(registration.accountId, registration.environment, registration.publicKey);
  try {
    return verifyEd25519(publicKey, message, signature);
  } catch {
    return false;
  }
}
