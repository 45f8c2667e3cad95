import type { ErrorData, Result } from '@hallmark/contracts';

export interface RequestContext {
  subject: string;
  /** The gateway's request id, carried in the message headers. */
  requestId: string;
}

/** Answers one request. Throw a HallmarkError to answer with its code; anything else answers INTERNAL_ERROR. */
export type RequestHandler = (payload: unknown, context: RequestContext) => Promise<unknown>;

export interface RequestOptions {
  /** Default 5,000 ms. Past it the reply is SERVICE_UNAVAILABLE. */
  timeoutMs?: number;
  requestId?: string;
}

export interface BusEvent {
  subject: string;
  payload: unknown;
  /** Position in the event stream; increases with each publish. */
  sequence: number;
  requestId: string | undefined;
  /** True when this delivery repeats one whose handler failed or did not finish. */
  redelivered: boolean;
}

export interface ConsumeOptions {
  /** The durable consumer's name: a consumer resumes where the last one of this name stopped. */
  durable: string;
  /** One subject filter (wildcards allowed). NATS 2.9 takes one filter per consumer. */
  subject: string;
  /** Resolve to acknowledge; reject to have the event delivered again after a pause. */
  handle?(event: BusEvent): Promise<void>;
  /**
   * Instead of `handle`: up to `maxBatch` events at once, in order; resolve to acknowledge them
   * all, reject to have them all delivered again. For projections that write in bulk. On NATS a
   * failed batch may come back after later events (JetStream redelivers after the pause), so a
   * handler must not depend on order across batches: write idempotently, keyed by `sequence`.
   */
  handleBatch?(events: BusEvent[]): Promise<void>;
  /** Default 256. */
  maxBatch?: number;
}

export interface Subscription {
  /**
   * Takes no more messages, and (for a served subject) resolves once the handlers it started have
   * answered: what a service closes after stopping its subscriptions (a thread pool, a publisher) is
   * no longer in use by a request.
   */
  stop(): Promise<void>;
}

/**
 * The message bus port. Request/reply goes to one member of a queue group, so N replicas of a
 * service share the load. Broadcasts reach every subscriber and are not kept. Events are kept
 * (JetStream) and reach each durable consumer at least once, in order.
 * Subjects are relative: the adapter puts its prefix in front.
 */
export interface Bus {
  /** Never rejects for a remote failure: errors come back as values with codes. */
  request<T = unknown>(subject: string, payload: unknown, options?: RequestOptions): Promise<Result<T, ErrorData>>;
  serve(subject: string, options: { queue: string }, handler: RequestHandler): Promise<Subscription>;
  broadcast(subject: string, payload: unknown): Promise<void>;
  onBroadcast(subject: string, handler: (payload: unknown, subject: string) => void): Promise<Subscription>;
  /** Resolves once the event is stored. */
  publishEvent(
    subject: string,
    payload: unknown,
    /** `timeoutMs`: how long to wait for the store's acknowledgement (NATS: 5 s unless given). */
    options?: { messageId?: string; requestId?: string; timeoutMs?: number },
  ): Promise<void>;
  consumeEvents(options: ConsumeOptions): Promise<Subscription>;
  ping(): Promise<void>;
  /** Stops taking requests and events, waits for the handlers in flight, then closes. */
  drain(): Promise<void>;
}

export const defaultRequestTimeoutMs = 5_000;
export const redeliveryDelayMs = 500;
