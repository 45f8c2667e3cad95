import { hash, randomBytes, randomUUID } from 'node:crypto';

/** One-shot `crypto.hash` (Node ≥ 20.12): no Hash object per call, which matters on the per-request path. */
export function sha256Hex(input: string | Uint8Array): string {
  return hash('sha256', input, 'hex');
}

/** `bytes` random bytes from the CSPRNG, as lower-case hex. */
export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

/**
 * An RFC 9562 UUIDv7: 48 bits of Unix milliseconds, then 74 random bits. Ids made later sort
 * later (to the millisecond), so a B-tree index of them grows at its right edge instead of
 * touching a random page for every insert. The random part comes from `randomUUID`, which draws
 * from a buffered CSPRNG pool (a `randomBytes` call per id costs a few microseconds more).
 */
export function uuidV7(nowMs = Date.now()): string {
  const time = nowMs.toString(16).padStart(12, '0');
  const random = randomUUID();
  // randomUUID is xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: keep its random digits and variant, set version 7.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`;
}
