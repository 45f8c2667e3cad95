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

/**
 * One message of a reply as it crosses the bus: its `hallmark-reply-part` header (empty for a reply
 * in one message) and its bytes.
 */
export interface SignedReply {
  part: string;
  data: Uint8Array | string;
}

/** An event as JetStream keeps it: its full subject, its message id (empty when it has none) and its bytes. */
export interface SignedEvent {
  subject: string;
  messageId: string;
  data: Uint8Array | string;
}

/** A broadcast as it crosses the bus: its full subject and its bytes. */
export interface SignedBroadcast {
  subject: string;
  data: Uint8Array | string;
}

/** Why a message was refused; for the log, not for the sender. */
export type SignatureRefusal = 'missing' | 'malformed' | 'expired' | 'mismatch';

export type SignatureCheck = { ok: true } | { ok: false; reason: SignatureRefusal };

/** What kind of bus message was refused: a request a service was asked, a reply, an event, a broadcast. */
export type RefusedMessageKind = 'request' | 'reply' | 'event' | 'broadcast';

/**
 * Told of each message a bus refused for its signature (a request not served, a reply, an event or
 * a broadcast dropped); the reason is for the log, not the sender.
 */
export type RefusedRequestListener = (refusal: {
  kind: RefusedMessageKind;
  subject: string;
  requestId: string;
  reason: SignatureRefusal;
}) => void;

/**
 * Signs requests on the bus and checks them, so a service does work only for callers holding the
 * deployment's bus secret (the gateway, and services calling each other), never for any client of
 * the bus. One HMAC-SHA256 per request over the subject, the request id, a timestamp and the
 * payload's bytes: a signed request moved to another subject, given another principal or replayed
 * after the window is refused. Within the window an identical copy is accepted (its answer goes
 * to the original caller's reply subject unless the copier chose another).
 *
 * Replies and events are signed too, so what a caller acts on (a verdict, a recorded scan) comes
 * from a holder of the secret, not from any client of the bus that answers first or publishes on
 * the events' subjects. A reply's signature covers the signature of the request it answers (which
 * covers that request's subject, id, time and bytes), its part header and its bytes: a reply copied
 * from another request, even an identical one made at another millisecond, does not check. An
 * event's covers its full subject, its message id and its bytes; it has no time, as JetStream keeps
 * events for days and a consumer may read one long after it was published.
 *
 * Broadcasts (a code blocked, a block lifted, a key revoked: what every replica acts on at once) are
 * signed over their full subject, a timestamp and their bytes, and taken within the same window as
 * requests: core NATS delivers them at once or never, and a copy replayed later is refused.
 */
export interface RequestSigner {
  sign(request: SignedRequest): string;
  verify(signature: string | undefined, request: SignedRequest): SignatureCheck;
  /** The signature of one message of the reply to the request that carried `requestSignature`. */
  signReply(requestSignature: string, reply: SignedReply): string;
  verifyReply(signature: string | undefined, requestSignature: string, reply: SignedReply): SignatureCheck;
  signEvent(event: SignedEvent): string;
  verifyEvent(signature: string | undefined, event: SignedEvent): SignatureCheck;
  signBroadcast(broadcast: SignedBroadcast): string;
  verifyBroadcast(signature: string | undefined, broadcast: SignedBroadcast): SignatureCheck;
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

  const replyMac = (requestSignature: string, reply: SignedReply): Buffer =>
    createHmac('sha256', key)
      .update(`hallmark-reply-v${version}\n${requestSignature}\n${reply.part}\n`)
      .update(reply.data)
      .digest();
  const eventMac = (event: SignedEvent): Buffer =>
    createHmac('sha256', key)
      .update(`hallmark-event-v${version}\n${event.subject}\n${event.messageId}\n`)
      .update(event.data)
      .digest();
  const broadcastMac = (broadcast: SignedBroadcast, timestamp: string): Buffer =>
    createHmac('sha256', key)
      .update(`hallmark-broadcast-v${version}\n${broadcast.subject}\n${timestamp}\n`)
      .update(broadcast.data)
      .digest();
  const timed = (timestamp: string, mac: Buffer) => `${version}.${timestamp}.${mac.toString('base64url')}`;

  /** Checks a signature of the form `1.<unix ms>.<base64url HMAC-SHA256>`, made within the window, against `expected`. */
  const checkTimed = (signature: string | undefined, expected: (timestamp: string) => Buffer): SignatureCheck => {
    if (!signature) return { ok: false, reason: 'missing' };
    const parts = signature.split('.');
    const [signatureVersion, timestamp, encoded] = parts;
    if (parts.length !== 3 || signatureVersion !== version || !timestamp || !/^\d{1,15}$/.test(timestamp) || !encoded) {
      return { ok: false, reason: 'malformed' };
    }
    const presented = Buffer.from(encoded, 'base64url');
    if (presented.length !== macLength) return { ok: false, reason: 'malformed' };
    if (Math.abs(now() - Number(timestamp)) > maxAgeMs) return { ok: false, reason: 'expired' };
    return timingSafeEqual(presented, expected(timestamp)) ? { ok: true } : { ok: false, reason: 'mismatch' };
  };

  return {
    sign(request) {
      const timestamp = String(now());
      return timed(timestamp, mac(request, timestamp));
    },

    verify(signature, request) {
      return checkTimed(signature, (timestamp) => mac(request, timestamp));
    },

    signReply(requestSignature, reply) {
      return `${version}.${replyMac(requestSignature, reply).toString('base64url')}`;
    },

    verifyReply(signature, requestSignature, reply) {
      return checkUntimed(signature, () => replyMac(requestSignature, reply));
    },

    signEvent(event) {
      return `${version}.${eventMac(event).toString('base64url')}`;
    },

    verifyEvent(signature, event) {
      return checkUntimed(signature, () => eventMac(event));
    },

    signBroadcast(broadcast) {
      const timestamp = String(now());
      return timed(timestamp, broadcastMac(broadcast, timestamp));
    },

    verifyBroadcast(signature, broadcast) {
      return checkTimed(signature, (timestamp) => broadcastMac(broadcast, timestamp));
    },
  };
}

/** Checks a signature of the form `1.<base64url HMAC-SHA256>` (replies and events) against `expected`. */
function checkUntimed(signature: string | undefined, expected: () => Buffer): SignatureCheck {
  if (!signature) return { ok: false, reason: 'missing' };
  const dot = signature.indexOf('.');
  if (dot < 0 || signature.slice(0, dot) !== version) return { ok: false, reason: 'malformed' };
  const presented = Buffer.from(signature.slice(dot + 1), 'base64url');
  if (presented.length !== macLength) return { ok: false, reason: 'malformed' };
  return timingSafeEqual(presented, expected()) ? { ok: true } : { ok: false, reason: 'mismatch' };
}
