import { createHash } from 'node:crypto';

export interface OkpJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

/** RFC 7638 thumbprint of an Ed25519 key (RFC 8037 §2): SHA-256 over the canonical JWK, base64url. */
export function ed25519Thumbprint(publicKey: Uint8Array): string {
  const canonical = `{"crv":"Ed25519","kty":"OKP","x":"${Buffer.from(publicKey).toString('base64url')}"}`;
  return createHash('sha256').update(canonical).digest('base64url');
}

export function ed25519Jwk(publicKey: Uint8Array, kid: string): OkpJwk {
  return { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url'), kid, alg: 'EdDSA', use: 'sig' };
}
