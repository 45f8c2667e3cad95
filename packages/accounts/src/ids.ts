import { randomHex } from '@hallmark/crypto';

/** `acc_…`, `key_…`: a type prefix and 80 random bits, hex. */
export function newId(prefix: 'acc' | 'key'): string {
  return `${prefix}_${randomHex(10)}`;
}
