import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto';

export interface Ed25519KeyPair {
  /** The raw 32-byte public key. */
  publicKey: Buffer;
  /** The raw 32-byte private seed. */
  privateKey: Buffer;
}

export function generateEd25519KeyPair(): Ed25519KeyPair {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  return { publicKey: Buffer.from(String(jwk.x), 'base64url'), privateKey: Buffer.from(String(jwk.d), 'base64url') };
}

/**
 * A KeyObject from raw public key bytes. Built through JWK, not DER: on OpenSSL 3 a DER import
 * costs about as much as a verification (110 µs against 7 µs, docs/ARCHITECTURE.md). Cache the result.
 */
export function ed25519PublicKeyObject(publicKey: Uint8Array): KeyObject {
  if (publicKey.length !== 32) throw new RangeError('An Ed25519 public key is 32 bytes.');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' });
}

export function ed25519PrivateKeyObject(keyPair: Ed25519KeyPair): KeyObject {
  return createPrivateKey({
    key: {
      kty: 'OKP',
      crv: 'Ed25519',
      x: keyPair.publicKey.toString('base64url'),
      d: keyPair.privateKey.toString('base64url'),
    },
    format: 'jwk',
  });
}

export function signEd25519(privateKey: KeyObject, message: Uint8Array): Buffer {
  return sign(null, message, privateKey);
}

/** False for a wrong signature, including one of the wrong length. */
export function verifyEd25519(publicKey: KeyObject, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  return verify(null, message, publicKey, signature);
}

/**
 * `verifyEd25519` run in libuv's thread pool: the caller's thread stays free for other requests,
 * and verifications spread over every core (about twice the throughput on two cores,
 * docs/ARCHITECTURE.md). The pool has UV_THREADPOOL_SIZE threads (4 by default).
 */
export function verifyEd25519InThreadPool(publicKey: KeyObject, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  if (signature.length !== 64) return Promise.resolve(false);
  return new Promise((resolve, reject) => {
    verify(null, message, publicKey, signature, (error, valid) => (error ? reject(error) : resolve(valid)));
  });
}

/** `signEd25519` run in libuv's thread pool, as `verifyEd25519InThreadPool`. */
export function signEd25519InThreadPool(privateKey: KeyObject, message: Uint8Array): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    sign(null, message, privateKey, (error, signature) => (error ? reject(error) : resolve(signature)));
  });
}
