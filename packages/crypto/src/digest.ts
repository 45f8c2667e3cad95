import { hash, randomBytes } from 'node:crypto';

/** One-shot `crypto.hash` (Node ≥ 20.12): no Hash object per call, which matters on the per-request path. */
export function sha256Hex(input: string | Uint8Array): string {
  return hash('sha256', input, 'hex');
}

/** `bytes` random bytes from the CSPRNG, as lower-case hex. */
export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}
