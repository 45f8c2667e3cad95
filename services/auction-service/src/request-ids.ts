import { createHash } from 'node:crypto';
import { canonicalJson } from '@hallmark/provenance';

/**
 * The seed of what a request with an Idempotency-Key creates (`requestKey`, the gateway's hash of
 * the key's scope; docs/API.md, Idempotency-Key): SHA-256 of the kind, the key and the request's
 * body as RFC 8785 JSON (so field order does not matter). A retry of the same request (its answer
 * lost) finds what the first made; the same key with another body (the gateway forgot the key after
 * 24 hours, or released it after a failed answer) makes something of its own, and never meets,
 * answers or changes the first request's object, event or transfer.
 */
export function idSeedOf(
  kind: 'object' | 'provenance-event' | 'photo' | 'transfer' | 'transfer-confirm',
  requestKey: string,
  body: unknown,
): Buffer {
  return createHash('sha256')
    .update(`hallmark:${kind}:${requestKey}\n${canonicalJson(body)}`)
    .digest();
}

/** The id (a UUID, version 8, RFC 9562) of the event a keyed request records: the same request always names the same event. */
export function eventIdOf(kind: 'provenance-event' | 'photo' | 'transfer-confirm', requestKey: string, body: unknown): string {
  const hex = idSeedOf(kind, requestKey, body).toString('hex').slice(0, 32).split('');
  hex[12] = '8';
  hex[16] = ((Number.parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  const id = hex.join('');
  return `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;
}
