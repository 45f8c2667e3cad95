import type { Environment } from '@hallmark/contracts';
import { randomHex, sha256Hex } from '@hallmark/crypto';

const secretPattern = /^svc_(live|test)_[0-9a-f]{64}$/;

/** A new key in the spec's format `svc_{environment}_{64 hex}`, from the CSPRNG. */
export function newApiKeySecret(environment: Environment): string {
  return `svc_${environment}_${randomHex(32)}`;
}

/** Whether a secret has the spec's form; no match object, as the gateway asks on every request. */
export function isWellFormedSecret(secret: string): boolean {
  return secretPattern.test(secret);
}

/** The environment a well-formed secret names, or undefined for anything malformed. */
export function environmentOfSecret(secret: string): Environment | undefined {
  const match = secretPattern.exec(secret);
  return match ? (match[1] as Environment) : undefined;
}

/** What is stored and looked up: the SHA-256 of the secret, hex. */
export function hashApiKeySecret(secret: string): string {
  return sha256Hex(secret);
}

/** Enough of a secret to tell keys apart in a listing (`svc_live_1a2b…`), too little to matter. */
export function secretPrefix(secret: string): string {
  return `${secret.slice(0, 13)}…`;
}
