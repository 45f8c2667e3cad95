import { randomUUID } from 'node:crypto';
import type { ErrorData, Result } from '@hallmark/contracts';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  jetstream,
  jetstreamManager,
} from '@nats-io/jetstream';
import {
  connect,
  headers,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Subscription as NatsSubscription,
} from '@nats-io/transport-node';
import { answer, type HandlerErrorListener, InFlight } from './answer.ts';
import {
  type Bus,
  type ConsumeOptions,
  defaultRequestTimeoutMs,
  type RequestHandler,
  redeliveryDelayMs,
  type Subscription,
} from './bus.ts';
import { deliver } from './in-process-bus.ts';
import type { NamespaceRegister } from './namespace-register.ts';
import { claimStreamName, openNatsNamespaceRegister } from './nats-namespace-register.ts';
import { createReplyInbox, type ReplyCheck } from './nats-reply-inbox.ts';
import { maxMessageBytes, replyPartHeader, sendReply } from './nats-reply-parts.ts';
import { ensureStream, streamNameOf } from './nats-streams.ts';
import { natsConnectionSettings } from './nats-url.ts';
import {
  type RefusedMessageKind,
  type RefusedRequestListener,
  type RequestSigner,
  type SignatureCheck,
  signatureHeader,
} from './request-signature.ts';
import { refusedRequest, requestTooLarge, serviceUnavailable } from './unavailable.ts';

export interface NatsBusOptions {
  /** A NATS URL; credentials and `tls://` in it are honoured (nats-url.ts). */
  servers: string;
  /** PEM file of the authorities trusted for a `tls://` server's certificate. */
  tlsCaFile?: string;
  /** Shown in the server's connection list; also names its inbox, `_INBOX.<name>` (inboxPrefixOf). */
  name: string;
  /** Put in front of every subject, and names the JetStream stream; isolates deployments and tests. */
  prefix?: string;
  /** Copies JetStream keeps of the event stream (1 unless said; a cluster of at least that many JetStream servers). */
  streamReplicas?: number;
  onInternalError?: HandlerErrorListener;
  /**
   * Signs every request, reply, event and broadcast this connection sends, and takes only signed
   * ones: a request served unsigned gets SERVICE_UNAVAILABLE, a reply, event or broadcast is
   * dropped, each reported to `onRefusedRequest`. Without it, nothing is signed or checked.
   */
  signer?: RequestSigner;
  /**
   * With a signer: replies, events and broadcasts without a signature are taken (one with a wrong
   * signature never is). Only while processes of a release that did not sign them run beside this
   * one (a rolling update from it); otherwise any client of NATS could answer a request, publish an
   * event or broadcast a code blocked.
   */
  acceptUnsigned?: boolean;
  /** Told of each request refused, and each reply, event or broadcast dropped, for its signature. */
  onRefusedRequest?: RefusedRequestListener;
}

const requestIdHeader = 'x-request-id';
/** Where JetStream keeps a published message's id (its `msgID`). */
const messageIdHeader = 'Nats-Msg-Id';
const minimumServer = [2, 9, 0] as const;
const fetchExpiresMs = 1_000;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const encode = (value: unknown) => encoder.encode(JSON.stringify(value ?? null));
const decode = (data: Uint8Array): unknown => (data.length === 0 ? undefined : JSON.parse(decoder.decode(data)));

/** A message's `hallmark-signature` header; undefined when it has none (or an empty one). */
const signatureOf = (message: { headers?: MsgHdrs | undefined }): string | undefined =>
  message.headers?.get(signatureHeader) || undefined;

/** The headers of a message this bus sends: its request id and its signature, each when it has one. */
function busHeaders(requestId: string | undefined, signature?: string): MsgHdrs {
  const messageHeaders = headers();
  if (requestId !== undefined) messageHeaders.set(requestIdHeader, requestId);
  if (signature !== undefined) messageHeaders.set(signatureHeader, signature);
  return messageHeaders;
}

/** `_INBOX.<name>`: where a connection named `name` takes its replies (the name as one subject token). */
export function inboxPrefixOf(name: string): string {
  return `_INBOX.${name.replace(/[^A-Za-z0-9_-]/g, '_') || 'hallmark'}`;
}

/** Whether a message's bytes are a service's refusal of a request for its signature (unavailable.ts). */
function isRefusal(data: Uint8Array): boolean {
  try {
    const answer = decode(data) as { ok?: unknown; error?: { code?: unknown; details?: { reason?: unknown } } } | undefined;
    return answer?.ok === false && answer.error?.code === 'SERVICE_UNAVAILABLE' && answer.error.details?.reason === 'refused';
  } catch {
    return false;
  }
}

function versionAtLeast(version: string, minimum: readonly number[]): boolean {
  const parts = version.split('.').map((part) => Number.parseInt(part, 10));
  for (let i = 0; i < minimum.length; i++) {
    const have = parts[i] ?? 0;
    const want = minimum[i] ?? 0;
    if (have !== want) return have > want;
  }
  return true;
}

/** The stream that keeps this prefix's events. */
export function eventStreamName(prefix: string): string {
  return streamNameOf(prefix, 'EVENTS');
}

/** The bus over NATS, and the register of who uses its prefix (namespace-register.ts). */
export interface NatsBus extends Bus {
  /** Opens the prefix's installation claim (its stream made when missing); a claim lasts `ttlMs` from its last write. */
  namespaceRegister(ttlMs: number): Promise<NamespaceRegister>;
}

/**
 * The bus over NATS: core request/reply on queue groups, core publish for broadcasts, and
 * JetStream (file storage, durable pull consumers with explicit acks) for events.
 * Uses only what nats-server 2.9 offers: one filter subject per consumer, no consumer metadata.
 * Fails at connect with a readable message when the server is older or runs without JetStream.
 */
export async function createNatsBus(options: NatsBusOptions): Promise<NatsBus> {
  const prefix = options.prefix ?? 'hallmark';
  const full = (subject: string) => `${prefix}.${subject}`;
  const eventSubject = (subject: string) => `${prefix}.events.${subject}`;
  const streamName = eventStreamName(prefix);

  const { servers, ...credentialsAndTls } = natsConnectionSettings(options.servers, options.tlsCaFile);
  const inboxPrefix = inboxPrefixOf(options.name);
  const nc: NatsConnection = await connect({
    servers,
    ...credentialsAndTls,
    name: options.name,
    // Replies (and JetStream's answers) come to `_INBOX.<name>.…`, so NATS can let each service's
    // user read only its own (infra/nats-permissions.ts).
    inboxPrefix,
    maxReconnectAttempts: -1,
    // The client would otherwise make an Error per request and per timer, only to give its own
    // failures an async stack: that was ~5% of the gateway's CPU under load. Bus failures reach
    // callers as HallmarkErrors with codes, which is what they act on.
    noAsyncTraces: true,
  });
  const version = nc.info?.version ?? '0.0.0';
  if (!versionAtLeast(version, minimumServer)) {
    await nc.close();
    throw new Error(`nats-server ${version} at ${servers} is too old: Hallmark needs ${minimumServer.join('.')} or newer.`);
  }
  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(nc);
  } catch (error) {
    await nc.close();
    throw new Error(`nats-server at ${servers} has JetStream disabled; start it with -js (JetStream stores Hallmark's events).`, {
      cause: error,
    });
  }
  try {
    await ensureStream(jsm, {
      name: streamName,
      subject: `${prefix}.events.>`,
      limits: streamLimits,
      replicas: options.streamReplicas ?? 1,
    });
  } catch (error) {
    await nc.close();
    throw error;
  }
  const js: JetStreamClient = jetstream(nc);
  const replies = createReplyInbox(nc, inboxPrefix);

  const { signer, acceptUnsigned = false, onRefusedRequest } = options;

  /**
   * Which messages to a request's inbox are its reply: those signed for it. An unsigned one that
   * says the service refused the request is taken as that refusal (a service cannot sign for a
   * caller without the secret); the refusal the caller sees is its own text, not the message's.
   */
  const replyCheck =
    (requestSigner: RequestSigner, subject: string, requestId: string, requestSignature: string): ReplyCheck =>
    (message) => {
      const check = requestSigner.verifyReply(signatureOf(message), requestSignature, {
        part: message.headers?.get(replyPartHeader) ?? '',
        data: message.data,
      });
      if (check.ok) return 'take';
      if (check.reason === 'missing') {
        if (acceptUnsigned) return 'take';
        if (isRefusal(message.data)) return 'refused';
      }
      onRefusedRequest?.({ kind: 'reply', subject, requestId, reason: check.reason });
      return 'drop';
    };

  /** Whether a checked event or broadcast is taken: signed, or unsigned during a rolling update; else reported. */
  const taken = (check: SignatureCheck, kind: RefusedMessageKind, subject: string, requestId: string): boolean => {
    if (check.ok || (check.reason === 'missing' && acceptUnsigned)) return true;
    onRefusedRequest?.({ kind, subject, requestId, reason: check.reason });
    return false;
  };

  /** An event published by a holder of the bus secret (publishEvent signs each); others are dropped. */
  const isPublishedHere = (message: JsMsg): boolean =>
    !signer ||
    taken(
      signer.verifyEvent(signatureOf(message), {
        subject: message.subject,
        messageId: message.headers?.get(messageIdHeader) ?? '',
        data: message.data,
      }),
      'event',
      message.subject.slice(`${prefix}.events.`.length),
      message.headers?.get(requestIdHeader) ?? '',
    );

  /**
   * A broadcast sent by a holder of the bus secret within the signature window; others are dropped.
   * Replicas act on broadcasts at once (a code blocked, a block lifted), so a made-up one would bend
   * verdicts on every replica.
   */
  const isBroadcastHere = (message: Msg): boolean =>
    !signer ||
    taken(
      signer.verifyBroadcast(signatureOf(message), { subject: message.subject, data: message.data }),
      'broadcast',
      message.subject.slice(prefix.length + 1),
      '',
    );

  const inFlight = new InFlight();
  const servedSubscriptions = new Set<NatsSubscription>();
  const consumers = new Set<Subscription>();

  return {
    async request<T>(subject: string, payload: unknown, requestOptions: { timeoutMs?: number; requestId?: string } = {}) {
      const timeoutMs = requestOptions.timeoutMs ?? defaultRequestTimeoutMs;
      const requestId = requestOptions.requestId ?? randomUUID();
      const data = encode(payload);
      // A request is one message (a queue group's members each take whole messages): one larger
      // than the server carries is refused here, not thrown by the client library (a 500).
      if (data.length > maxMessageBytes(nc)) return { ok: false, error: requestTooLarge(data.length, maxMessageBytes(nc)) };
      const fullSubject = full(subject);
      const signature = signer?.sign({ subject: fullSubject, requestId, data });
      const outcome = await replies.request(fullSubject, data, {
        timeoutMs,
        headers: busHeaders(requestId, signature),
        ...(signer && signature ? { check: replyCheck(signer, subject, requestId, signature) } : {}),
      });
      if (outcome.kind === 'reply') return decode(outcome.data) as Result<T, ErrorData>;
      if (outcome.kind === 'refused') return { ok: false, error: refusedRequest(subject) };
      return { ok: false, error: serviceUnavailable(subject, outcome.kind, timeoutMs) };
    },

    async serve(subject, serveOptions, handler: RequestHandler) {
      // This subject's handlers in flight (stop waits for them), beside the connection's (drain does).
      const handlers = new InFlight();
      const onMessage = (message: Msg) => {
        const sentRequestId = message.headers?.get(requestIdHeader) ?? '';
        const requestId = sentRequestId || randomUUID();
        const requestSignature = signatureOf(message);
        if (signer) {
          const check = signer.verify(requestSignature, {
            subject: message.subject,
            requestId: sentRequestId,
            data: message.data,
          });
          if (!check.ok) {
            onRefusedRequest?.({ kind: 'request', subject, requestId, reason: check.reason });
            message.respond(encode({ ok: false, error: refusedRequest(subject) }));
            return;
          }
        }
        // The answer is signed for the request it answers: its caller takes no other.
        const sign =
          signer && requestSignature
            ? (part: string, data: Uint8Array) => signer.signReply(requestSignature, { part, data })
            : undefined;
        const context = { subject, requestId };
        /** Sends the answer, in parts when large; one that cannot be sent is answered as an error, never thrown. */
        const reply = (result: unknown) => {
          try {
            sendReply(nc, message, encode(result), sign);
          } catch (error) {
            options.onInternalError?.(error, context);
            try {
              sendReply(
                nc,
                message,
                encode({ ok: false, error: { code: 'INTERNAL_ERROR', message: 'The answer could not be sent.' } }),
                sign,
              );
            } catch {
              // The connection is gone: the requester's timeout answers it.
            }
          }
        };
        void inFlight.track(
          handlers.track(
            (async () => {
              let payload: unknown;
              try {
                payload = decode(message.data);
              } catch {
                const error: ErrorData = { code: 'VALIDATION_ERROR', message: 'The request is not valid JSON.' };
                reply({ ok: false, error });
                return;
              }
              reply(await answer(handler, payload, context, options.onInternalError));
            })(),
          ),
        );
      };
      const subscription = nc.subscribe(full(subject), {
        queue: serveOptions.queue,
        callback: (error, message) => {
          if (!error) onMessage(message);
        },
      });
      servedSubscriptions.add(subscription);
      // Resolve only once the server knows the subscription: a request sent right after from
      // another connection must find a responder.
      await nc.flush();
      return {
        async stop() {
          servedSubscriptions.delete(subscription);
          await subscription.drain();
          await handlers.idle();
        },
      };
    },

    async broadcast(subject, payload) {
      const fullSubject = full(subject);
      const data = encode(payload);
      const signature = signer?.signBroadcast({ subject: fullSubject, data });
      nc.publish(fullSubject, data, signature ? { headers: busHeaders(undefined, signature) } : {});
    },

    async onBroadcast(subject, handler) {
      const subscription = nc.subscribe(full(subject), {
        callback: (error, message) => {
          if (error || !isBroadcastHere(message)) return;
          try {
            handler(decode(message.data), message.subject.slice(prefix.length + 1));
          } catch (handlerError) {
            options.onInternalError?.(handlerError, { subject, requestId: '' });
          }
        },
      });
      await nc.flush();
      return { stop: () => subscription.drain() };
    },

    async publishEvent(subject, payload, publishOptions = {}) {
      const fullSubject = eventSubject(subject);
      const data = encode(payload);
      const signature = signer?.signEvent({ subject: fullSubject, messageId: publishOptions.messageId ?? '', data });
      await js.publish(fullSubject, data, {
        ...(publishOptions.messageId ? { msgID: publishOptions.messageId } : {}),
        ...(publishOptions.timeoutMs ? { timeout: publishOptions.timeoutMs } : {}),
        ...(publishOptions.requestId || signature ? { headers: busHeaders(publishOptions.requestId, signature) } : {}),
      });
    },

    async consumeEvents(consumeOptions: ConsumeOptions) {
      // Adding a durable consumer that exists with the same settings changes nothing.
      const openConsumer = async () => {
        await jsm.consumers.add(streamName, {
          durable_name: consumeOptions.durable,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          filter_subject: eventSubject(consumeOptions.subject),
          ack_wait: 30_000_000_000, // 30 s in nanoseconds: a handler still running then is presumed dead
        });
        return js.consumers.get(streamName, consumeOptions.durable);
      };
      let consumer = await openConsumer();
      let stopping = false;
      const maxBatch = consumeOptions.handleBatch ? (consumeOptions.maxBatch ?? 256) : 1;

      /** One fetch: its messages handed over in batches, each acknowledged once handled (else redelivered). */
      const fetchAndDeliver = async () => {
        const messages = await consumer.fetch({
          max_messages: consumeOptions.handleBatch ? maxBatch : 256,
          expires: fetchExpiresMs,
        });
        let batch: JsMsg[] = [];
        const flush = async () => {
          // Redeliveries can arrive among newer messages: hand each batch over in stream order.
          batch.sort((a, b) => a.seq - b.seq);
          const deliveries = batch.map((message) => ({
            subject: message.subject.slice(`${prefix}.events.`.length),
            payload: decode(message.data),
            sequence: message.seq,
            requestId: message.headers?.get(requestIdHeader) || undefined,
            redelivered: message.redelivered,
          }));
          const held = batch;
          batch = [];
          try {
            await inFlight.track(deliver(consumeOptions, deliveries));
            for (const message of held) message.ack();
          } catch {
            for (const message of held) message.nak(redeliveryDelayMs);
          }
        };
        try {
          for await (const message of messages) {
            if (isPublishedHere(message)) batch.push(message);
            else message.term(); // not given again: no retry makes it signed
            // A batch handler gets full batches, or what one fetch brought; one by one, as they come.
            if (batch.length >= maxBatch || (!consumeOptions.handleBatch && messages.getPending() === 0 && batch.length > 0))
              await flush();
          }
        } finally {
          // A fetch that ends in an error still hands over what it brought.
          if (batch.length > 0) await flush();
        }
      };

      // Bounded fetches rather than one open-ended consume: nats-server 2.9 cannot cancel a pull
      // request, and a stale one would swallow the next event until its ack wait ran out. Each
      // fetch ends within fetchExpiresMs, and stop() waits for the one in hand. A fetch can fail
      // (heartbeats missed while the process was busy, the consumer deleted, the server
      // restarted): the failure is reported, and consuming goes on after a pause, with the
      // consumer made again if it is gone. Without this, one failed fetch ended consuming for good.
      const loop = (async () => {
        while (!stopping) {
          try {
            await fetchAndDeliver();
          } catch (error) {
            if (stopping) break; // a fetch cut short by drain() is no failure
            options.onInternalError?.(error, { subject: consumeOptions.subject, requestId: '' });
            await new Promise((resolve) => setTimeout(resolve, redeliveryDelayMs));
            if (!stopping) consumer = await openConsumer().catch(() => consumer);
          }
        }
      })();
      const subscription: Subscription = {
        async stop() {
          consumers.delete(subscription);
          stopping = true;
          await loop;
        },
      };
      consumers.add(subscription);
      return subscription;
    },

    async ping() {
      await nc.rtt();
    },

    namespaceRegister(ttlMs) {
      return openNatsNamespaceRegister(jsm, js, prefix, { ttlMs, replicas: options.streamReplicas ?? 1 });
    },

    async drain() {
      await Promise.all([...servedSubscriptions].map((subscription) => subscription.drain()));
      servedSubscriptions.clear();
      await Promise.all([...consumers].map((consumer) => consumer.stop()));
      await inFlight.idle();
      await nc.drain();
    },
  };
}

/** Limits, so every scan's event does not pile up for ever: 7 days or 1 GiB, oldest first. */
const streamLimits = { max_age: 7 * 86_400 * 1e9, max_bytes: 1024 ** 3 };

/** Deletes the streams of a prefix, its events' and its installation claim's (tests clean up with this). */
export async function deleteNamespaceStreams(url: string, prefix: string, tlsCaFile?: string): Promise<void> {
  const nc = await connect(natsConnectionSettings(url, tlsCaFile));
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(eventStreamName(prefix)).catch(() => false);
    await jsm.streams.delete(claimStreamName(prefix)).catch(() => false);
  } finally {
    await nc.close();
  }
}

/**
 * Makes the event stream of a prefix refuse every new event (`refusing`), as a JetStream that has
 * run out of room does: it keeps what it holds and answers each publish with an error. With
 * `refusing` false it takes events again. For fault tests; nothing is deleted either way.
 */
export async function setEventStreamRefusing(url: string, prefix: string, refusing: boolean, tlsCaFile?: string): Promise<void> {
  const nc = await connect(natsConnectionSettings(url, tlsCaFile));
  try {
    const jsm = await jetstreamManager(nc);
    const name = eventStreamName(prefix);
    // Room for nothing more: no more bytes than it holds (at least one, which no message fits in).
    const held = (await jsm.streams.info(name)).state.bytes;
    await jsm.streams.update(
      name,
      refusing
        ? { discard: DiscardPolicy.New, max_bytes: Math.max(held, 1) }
        : { discard: DiscardPolicy.Old, max_bytes: streamLimits.max_bytes },
    );
  } finally {
    await nc.close();
  }
}
