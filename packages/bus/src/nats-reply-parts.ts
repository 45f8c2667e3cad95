import { headers, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { signatureHeader } from './request-signature.ts';

/**
 * Replies larger than one NATS message (the server's `max_payload`, 1 MB by default) go in parts:
 * each part a message to the request's reply subject with this header, `<index>/<count>`, in order
 * (one connection's messages to one subject arrive in the order sent). A provenance history or an
 * export page has no size a single message could promise to hold, and a reply the client library
 * refused to send used to throw out of the handler and end the process.
 */
export const replyPartHeader = 'hallmark-reply-part';

/** Room kept in each message for the headers the server adds to it. */
const headroomBytes = 4_096;

/** A reply's parts: at most this many, so a reply is at most ~64 MB (a part is up to max_payload). */
export const maxReplyParts = 64;

/** The largest message body this connection may send (the server's max_payload, less headroom). */
export function maxMessageBytes(nc: NatsConnection): number {
  return Math.max(1_024, (nc.info?.max_payload ?? 1_048_576) - headroomBytes);
}

/** The signature of one message of a reply, from its part header ('' for a whole reply) and bytes. */
export type ReplySigner = (part: string, data: Uint8Array) => string;

/**
 * Sends `data` as the reply to `message`: in one message when it fits, else in parts; with `sign`,
 * each message carries its signature (request-signature.ts, replies). Throws what the connection
 * throws (closed, or a reply over maxReplyParts parts), for the caller to answer.
 */
export function sendReply(nc: NatsConnection, message: Msg, data: Uint8Array, sign?: ReplySigner): void {
  const partBytes = maxMessageBytes(nc);
  if (data.length <= partBytes) {
    if (sign) message.respond(data, { headers: withSignature(headers(), sign('', data)) });
    else message.respond(data);
    return;
  }
  const count = Math.ceil(data.length / partBytes);
  if (count > maxReplyParts) throw new Error(`a reply of ${data.length} bytes needs more than ${maxReplyParts} messages`);
  if (!message.reply) return;
  for (let index = 0; index < count; index++) {
    const part = `${index}/${count}`;
    const chunk = data.subarray(index * partBytes, (index + 1) * partBytes);
    const partHeaders = headers();
    partHeaders.set(replyPartHeader, part);
    nc.publish(message.reply, chunk, { headers: withSignature(partHeaders, sign?.(part, chunk)) });
  }
}

function withSignature(messageHeaders: MsgHdrs, signature: string | undefined): MsgHdrs {
  if (signature !== undefined) messageHeaders.set(signatureHeader, signature);
  return messageHeaders;
}

/** The parts of one reply received so far. */
export interface ReplyParts {
  received: Uint8Array[];
  bytes: number;
}

/**
 * Adds a received message to its reply's parts. `whole`: the reply, once every part came (or the
 * message itself, when it was no part); `incomplete` while parts are missing; `broken` for a part
 * out of order or a count beyond maxReplyParts (the request then ends at its timeout).
 */
export function receivePart(
  parts: ReplyParts | undefined,
  message: Msg,
): { kind: 'whole'; data: Uint8Array } | { kind: 'incomplete'; parts: ReplyParts } | { kind: 'broken' } {
  const header = message.headers?.get(replyPartHeader);
  if (!header) return { kind: 'whole', data: message.data };
  const [index, count] = header.split('/').map(Number);
  const soFar = parts ?? { received: [], bytes: 0 };
  if (count === undefined || !Number.isInteger(count) || count < 2 || count > maxReplyParts || index !== soFar.received.length)
    return { kind: 'broken' };
  // A copy: the library's message data may be a view of a buffer it reuses.
  soFar.received.push(message.data.slice());
  soFar.bytes += message.data.length;
  if (soFar.received.length < count) return { kind: 'incomplete', parts: soFar };
  const whole = new Uint8Array(soFar.bytes);
  let offset = 0;
  for (const part of soFar.received) {
    whole.set(part, offset);
    offset += part.length;
  }
  return { kind: 'whole', data: whole };
}
