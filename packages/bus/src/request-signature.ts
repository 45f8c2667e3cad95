import { createHmac, timingSafeEqual } from 'node:crypto';

/** The message header that carries a request's signature: `1.<unix ms>.<base64url HMAC-SHA256>`. */
export const signatureHeader = 'hallmark-signature';

/** How far a request's timestamp may lie from the receiver's clock, either way, by default. */
export const defaultSignatureMaxAgeMs = 30_000;

/** What a signature covers. `data` is the request's bytes as they cross the bus (the JSON payload, principal included). */
export interface SignedRequest {
  /** The full subject, namespace included. */
  subject: string;
  requestId: string;
  /** Text is taken as its UTF-8 bytes. */
  data: Uint8Array | string;
}

/** Why a request was refused; for the service's log, not for the caller. */
export type SignatureRefusal = 'missing' | 'malformed' | 'expired' | 'mismatch';

export type SignatureCheck = { ok: true } | { ok: false; reason: SignatureRefusal };

/** Told of each request a bus refused for its signature; the reason is for the log, not the caller. */
export type RefusedRequestListener = (refusal: { subject: string; requestId: string; reason: SignatureRefusal }) => void;

/**
 * Signs requests on the bus and checks them, so a service does work only for callers holding the
 * deployment's bus secret (the gateway, and services calling each other), never for any client of
 * the bus. One HMAC-SHA256 per request over the subject, the request id, a timestamp and the
 * payload's bytes: a signed request moved to another subject, given another principal or replayed
 * after the window is refused. Within the window an identical copy is accepted (its answer goes
 * to the original caller's reply subject unless the copier chose another).
 */
export interface RequestSigner {
  sign(request: SignedRequest): string;
  verify(signature: string | undefined, request: SignedRequest): SignatureCheck;
}

export interface RequestSignerOptions {
  /** Default 30 s. */
  maxAgeMs?: number;
  /** Milliseconds since the epoch; tests move it. */
  now?: () => number;
}

const version = '1';
const macLength = 32;

/**
 * HALLMARK_BUS_SECRET: 64 hex characters or base64 of 32 bytes.
 * Throws a RangeError when the text is not 32 bytes.
 */
export function parseBusSecret(text: string): Buffer {
  const trimmed = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (bytes.length !== 32) throw new RangeError('The bus secret must be 32 bytes: 64 hex characters or base64.');
  return bytes;
}

/** Throws a RangeError when the secret is shorter than 32 bytes. */
export function createRequestSigner(secret: Uint8Array, options: RequestSignerOptions = {}): RequestSigner {
  if (secret.length < 32) throw new RangeError('The bus secret must be at least 32 bytes.');
  const key = Buffer.from(secret);
  const maxAgeMs = options.maxAgeMs ?? defaultSignatureMaxAgeMs;
  const now = options.now ?? Date.now;

  // Subjects and header values cannot hold a newline, so the fields cannot run into each other;
  // the payload comes last and is taken whole.
  const mac = (request: SignedRequest, timestamp: string): Buffer =>
    createHmac('sha256', key)
      .update(`hallmark-rpc-v${version}\n${request.subject}\n${request.requestId}\n${timestamp}\n`)
      .update(request.data)
      .digest();

  return {
    sign(request) {
      const timestamp = String(now());
      return `${version}.${timestamp}.${mac(request, timestamp).toString('base64url')}`;
    },

    verify(signature, request) {
      if (!signature) return { ok: false, reason: 'missing' };
      const parts = signature.split('.');
      const [signatureVersion, timestamp, encoded] = parts;
      if (parts.length !== 3 || signatureVersion !== version || !timestamp || !/^\d{1,15}$/.test(timestamp) || !encoded) {
        return { ok: false, reason: 'malformed' };
      }
      const presented = Buffer.from(encoded, 'base64url');
      if (presented.length !== macLength) return { ok: false, reason: 'malformed' };
      if (Math.abs(now() - Number(timestamp)) > maxAgeMs) return { ok: false, reason: 'expired' };
      return timingSafeEqual(presented, mac(request, timestamp)) ? { ok: true } : { ok: false, reason: 'mismatch' };
    },
  };
}
