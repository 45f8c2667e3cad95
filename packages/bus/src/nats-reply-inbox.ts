import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { type ReplyParts, receivePart } from './nats-reply-parts.ts';

/** How a request over NATS ended. */
export type NatsReplyOutcome =
  | { kind: 'reply'; data: Uint8Array }
  | { kind: 'no-responders' }
  | { kind: 'timeout' }
  /** The connection closed first. */
  | { kind: 'closed' }
  /** The service refused the request (its `check` said so of an unsigned answer). */
  | { kind: 'refused' };

/**
 * What to do with a message that came to a request's inbox: take it as (a part of) the reply, take
 * it as the service's refusal of the request, or drop it (another answer may still come, else the
 * request times out).
 */
export type ReplyCheck = (message: Msg) => 'take' | 'refused' | 'drop';

export interface ReplyInbox {
  request(
    subject: string,
    data: Uint8Array,
    options: { timeoutMs: number; headers?: MsgHdrs; check?: ReplyCheck },
  ): Promise<NatsReplyOutcome>;
}

interface Waiting {
  resolve(outcome: NatsReplyOutcome): void;
  timer: NodeJS.Timeout;
  check: ReplyCheck | undefined;
  /** A reply sent in parts (nats-reply-parts.ts), as far as it came. */
  parts?: ReplyParts;
}

/** The server's answer when nobody subscribes to a request's subject: a 503 status with no data. */
const isNoResponders = (message: Msg) => message.data.length === 0 && message.headers?.code === 503;

/**
 * Request/reply over one subscription for all replies (`<inbox>.<token>`), as the client library's
 * own muxed requests, with less per request: the library's `request` builds an Error for every
 * request it completes (a cancellation it then ignores), whose stack trace cost ~10 µs, 2–3% of the
 * gateway's and verify-service's CPU under load (profiled). Outcomes are values, not exceptions.
 */
export function createReplyInbox(nc: NatsConnection, inboxPrefix?: string): ReplyInbox {
  const prefix = `${createInbox(inboxPrefix)}.`;
  const waiting = new Map<string, Waiting>();
  let nextToken = 0;
  const settle = (token: string, request: Waiting, outcome: NatsReplyOutcome) => {
    waiting.delete(token);
    clearTimeout(request.timer);
    request.resolve(outcome);
  };
  const subscription: Subscription = nc.subscribe(`${prefix}*`, {
    callback: (error, message) => {
      if (error) return;
      const token = message.subject.slice(prefix.length);
      const request = waiting.get(token);
      if (!request) return; // answered after its timeout
      // The server's own status, which carries no signature (one made up is as harmful as a timeout).
      if (isNoResponders(message)) return settle(token, request, { kind: 'no-responders' });
      const checked = request.check?.(message) ?? 'take';
      if (checked === 'drop') return;
      if (checked === 'refused') return settle(token, request, { kind: 'refused' });
      const received = receivePart(request.parts, message);
      if (received.kind === 'incomplete') {
        request.parts = received.parts;
        return;
      }
      // A broken reply is dropped: the request ends at its timeout, as if unanswered.
      if (received.kind === 'broken') return settle(token, request, { kind: 'timeout' });
      settle(token, request, { kind: 'reply', data: received.data });
    },
  });
  void subscription.closed.then(() => {
    for (const request of waiting.values()) {
      clearTimeout(request.timer);
      request.resolve({ kind: 'closed' });
    }
    waiting.clear();
  });

  return {
    request(subject, data, { timeoutMs, headers, check }) {
      const token = (nextToken++).toString(36);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiting.delete(token);
          resolve({ kind: 'timeout' });
        }, timeoutMs);
        waiting.set(token, { resolve, timer, check });
        try {
          nc.publish(subject, data, { reply: prefix + token, ...(headers ? { headers } : {}) });
        } catch (error) {
          waiting.delete(token);
          clearTimeout(timer);
          throw error;
        }
      });
    },
  };
}
