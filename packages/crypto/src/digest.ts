import { createHash, randomBytes } from 'node:crypto';

export function sha256Hex(input: string | Uint8Array): string {
  return createHash('sha256').update(input).digest('hex');
}

/** `bytes` random bytes from the CSPRNG, as lower-case hex. */
export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}
