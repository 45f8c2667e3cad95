import { randomUUID } from 'node:crypto';
import type { ErrorData, Result } from '@hallmark/contracts';
import { answer, type HandlerErrorListener, InFlight } from './answer.ts';
import {
  type Bus,
  type BusEvent,
  type ConsumeOptions,
  defaultRequestTimeoutMs,
  type RequestHandler,
  redeliveryDelayMs,
  type Subscription,
} from './bus.ts';
import { jsonCopy } from './json-copy.ts';
import type { RefusedRequestListener, RequestSigner } from './request-signature.ts';
import { subjectMatches } from './subject-match.ts';

/** How long a partial batch waits for more events before a batch handler gets it. */
const batchLingerMs = 250;

import { refusedRequest, serviceUnavailable } from './unavailable.ts';

interface StoredBusEvent {
  subject: string;
  payload: unknown;
  sequence: number;
  requestId: string | undefined;
}

interface DurableConsumer {
  /** Sequence of the last event acknowledged. */
  acknowledged: number;
  active: boolean;
  /** The subjects it takes. */
  subject: string;
}

/** A publish that waits for its event to be handled by the durable consumers that take it. */
interface HandledWaiter {
  subject: string;
  sequence: number;
  resolve: () => void;
}

interface Server {
  handler: RequestHandler;
  /** The connection's handlers in flight (drain waits for them). */
  inFlight: InFlight;
  /** This subject's (its subscription's stop waits for them). */
  handlers: InFlight;
  onInternalError: HandlerErrorListener | undefined;
  signer: RequestSigner | undefined;
  onRefusedRequest: RefusedRequestListener | undefined;
}

/** As NATS's options: sign what this connection sends, serve only signed requests. */
export interface InProcessConnectionOptions {
  onInternalError?: HandlerErrorListener;
  signer?: RequestSigner;
  onRefusedRequest?: RefusedRequestListener;
}

/** Index of the first event whose sequence is above `sequence` (events are in sequence order). */
function firstAfter(events: readonly StoredBusEvent[], sequence: number): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if ((events[middle] as StoredBusEvent).sequence <= sequence) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Hands events to a consumer's batch handler, or one by one to its event handler. */
export async function deliver(options: ConsumeOptions, events: BusEvent[]): Promise<void> {
  if (options.handleBatch) return options.handleBatch(events);
  if (!options.handle) throw new Error('A consumer needs handle or handleBatch.');
  for (const event of events) await options.handle(event);
}

/** Payloads cross the bus as JSON values, as they would over the network: no shared references. */
const copy = jsonCopy;

/**
 * What the connections of one process share: the servers of each subject, broadcast listeners,
 * the kept events and the durable consumers' positions. A hub plays the part of nats-server.
 */
export interface InProcessHub {
  connect(options?: InProcessConnectionOptions): Bus;
  /** How many events the hub holds: published, not yet acknowledged by every durable consumer. */
  keptEvents(): number;
}

/**
 * Kept events are those some durable consumer has not acknowledged yet, as in a JetStream stream
 * with interest retention: once every durable consumer the hub knows (running or stopped) has
 * acknowledged an event, it is dropped, so a process that publishes every scan holds only the scans
 * its consumers have not stored yet. Before any durable consumer exists every event is kept, for
 * the first one to read. Either way at most `maxEvents` are kept, the oldest dropped past it.
 */
export function createInProcessHub(options: { maxEvents?: number } = {}): InProcessHub {
  const maxEvents = options.maxEvents ?? 100_000;
  const servers = new Map<string, Server[]>();
  const roundRobin = new Map<string, number>();
  const broadcastListeners = new Set<{ pattern: string; handler: (payload: unknown, subject: string) => void }>();
  const events: StoredBusEvent[] = [];
  const durables = new Map<string, DurableConsumer>();
  const wakeConsumers = new Set<() => void>();
  const handledWaiters = new Set<HandledWaiter>();
  /** Ends the consumers' lingers over a partial batch: a publisher now waits for its event. */
  const endLingers = new Set<() => void>();
  /** Resolves the waiters whose event every running durable consumer of its subject has acknowledged. */
  const settleWaiters = () => {
    for (const waiter of handledWaiters) {
      const pending = [...durables.values()].some(
        (durable) => durable.active && durable.acknowledged < waiter.sequence && subjectMatches(durable.subject, waiter.subject),
      );
      if (pending) continue;
      handledWaiters.delete(waiter);
      waiter.resolve();
    }
  };
  let sequence = 0;

  const pickServer = (subject: string): Server | undefined => {
    const members = servers.get(subject);
    if (!members || members.length === 0) return undefined;
    const next = roundRobin.get(subject) ?? 0;
    roundRobin.set(subject, next + 1);
    return members[next % members.length];
  };

  const removeServer = (subject: string, server: Server) => {
    servers.set(
      subject,
      (servers.get(subject) ?? []).filter((member) => member !== server),
    );
  };

  /** Drops the events every durable consumer has acknowledged; none while there is no durable consumer. */
  const dropAcknowledged = () => {
    if (durables.size === 0 || events.length === 0) return;
    let lowest = Number.POSITIVE_INFINITY;
    for (const durable of durables.values()) lowest = Math.min(lowest, durable.acknowledged);
    const acknowledgedByAll = firstAfter(events, lowest);
    if (acknowledgedByAll > 0) events.splice(0, acknowledgedByAll);
  };

  return {
    keptEvents: () => events.length,

    connect(options = {}): Bus {
      const inFlight = new InFlight();
      const served = new Map<Server, string>();
      const listeners = new Set<{ pattern: string; handler: (payload: unknown, subject: string) => void }>();
      const consumers = new Set<Subscription>();

      return {
        async request<T>(subject: string, payload: unknown, requestOptions: { timeoutMs?: number; requestId?: string } = {}) {
          const timeoutMs = requestOptions.timeoutMs ?? defaultRequestTimeoutMs;
          const server = pickServer(subject);
          if (!server) return { ok: false, error: serviceUnavailable(subject, 'no-responders', timeoutMs) };
          const context = { subject, requestId: requestOptions.requestId ?? randomUUID() };
          let received: unknown;
          // A request made through the very signer the server checks with could only pass (same
          // secret, same clock, same bytes): the HMAC is computed only when the two differ, over
          // the payload's JSON text, as over the network. Otherwise the payload is copied as a JSON value.
          if (server.signer && server.signer !== options.signer) {
            const data = payload === undefined ? '' : JSON.stringify(payload);
            const signature = options.signer?.sign({ subject, requestId: context.requestId, data });
            const check = server.signer.verify(signature, { subject, requestId: context.requestId, data });
            if (!check.ok) {
              server.onRefusedRequest?.({ kind: 'request', subject, requestId: context.requestId, reason: check.reason });
              return { ok: false, error: refusedRequest(subject) };
            }
            received = data === '' ? undefined : JSON.parse(data);
          } else {
            received = copy(payload);
          }
          const reply = server.inFlight.track(
            server.handlers.track(answer(server.handler, received, context, server.onInternalError)),
          );
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<Result<unknown, ErrorData>>((resolve) => {
            timer = setTimeout(() => resolve({ ok: false, error: serviceUnavailable(subject, 'timeout', timeoutMs) }), timeoutMs);
          });
          const result = await Promise.race([reply, timeout]);
          clearTimeout(timer);
          return copy(result) as Result<T, ErrorData>;
        },

        async serve(subject, _serveOptions, handler) {
          const server: Server = {
            handler,
            inFlight,
            handlers: new InFlight(),
            onInternalError: options.onInternalError,
            signer: options.signer,
            onRefusedRequest: options.onRefusedRequest,
          };
          servers.set(subject, [...(servers.get(subject) ?? []), server]);
          served.set(server, subject);
          return {
            async stop() {
              removeServer(subject, server);
              served.delete(server);
              await server.handlers.idle();
            },
          };
        },

        async broadcast(subject, payload) {
          for (const listener of broadcastListeners) {
            if (subjectMatches(listener.pattern, subject)) listener.handler(copy(payload), subject);
          }
        },

        async onBroadcast(pattern, handler) {
          const listener = { pattern, handler };
          broadcastListeners.add(listener);
          listeners.add(listener);
          return {
            async stop() {
              broadcastListeners.delete(listener);
              listeners.delete(listener);
            },
          };
        },

        /**
         * Memory is no store: an event published with a `messageId` (one its publisher must know is
         * kept, as a SUSPICIOUS or COUNTERFEIT scan before its answer) resolves once every running
         * durable consumer of its subject has handled it, which writes it to the database; rejects
         * after `timeoutMs` (the event stays, and is handled later). Before, it resolved at once,
         * and a process killed just after lost those scans and their alerts. Others resolve at once.
         */
        async publishEvent(subject, payload, publishOptions = {}) {
          sequence += 1;
          const published = sequence;
          events.push({ subject, payload: copy(payload), sequence: published, requestId: publishOptions.requestId });
          if (events.length > maxEvents) events.splice(0, events.length - maxEvents);
          for (const wake of wakeConsumers) wake();
          if (publishOptions.messageId === undefined) return;
          for (const endLinger of endLingers) endLinger();
          const timeoutMs = publishOptions.timeoutMs ?? defaultRequestTimeoutMs;
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => {
              handledWaiters.delete(waiter);
              reject(new Error(`The event on ${subject} was not handled within ${timeoutMs} ms.`));
            }, timeoutMs);
            const waiter: HandledWaiter = {
              subject,
              sequence: published,
              resolve: () => {
                clearTimeout(timer);
                resolve();
              },
            };
            handledWaiters.add(waiter);
            settleWaiters();
          });
        },

        async consumeEvents(consumeOptions: ConsumeOptions): Promise<Subscription> {
          const durable = durables.get(consumeOptions.durable) ?? {
            acknowledged: 0,
            active: false,
            subject: consumeOptions.subject,
          };
          if (durable.active) throw new Error(`Durable consumer ${consumeOptions.durable} is already being consumed.`);
          durable.active = true;
          durable.subject = consumeOptions.subject;
          durables.set(consumeOptions.durable, durable);
          let stopped = false;
          let wake: (() => void) | undefined;
          const wakeUp = () => wake?.();
          wakeConsumers.add(wakeUp);
          const pause = (ms?: number) =>
            new Promise<void>((resolve) => {
              const timer = ms === undefined ? undefined : setTimeout(resolve, ms);
              wake = () => {
                clearTimeout(timer);
                resolve();
              };
            });

          const maxBatch = consumeOptions.handleBatch ? (consumeOptions.maxBatch ?? 256) : 1;
          const loop = (async () => {
            let attempts = 0;
            let lingered = false;
            while (!stopped) {
              const batch: StoredBusEvent[] = [];
              for (let i = firstAfter(events, durable.acknowledged); i < events.length; i++) {
                const candidate = events[i] as StoredBusEvent;
                if (subjectMatches(consumeOptions.subject, candidate.subject)) {
                  batch.push(candidate);
                  if (batch.length === maxBatch) break;
                }
              }
              if (batch.length === 0) {
                // Nothing of ours is pending: move past other subjects' events and wait.
                durable.acknowledged = Math.max(durable.acknowledged, events.at(-1)?.sequence ?? 0);
                dropAcknowledged();
                settleWaiters();
                await pause();
                continue;
              }
              const awaited = [...handledWaiters].some((waiter) => waiter.sequence <= (batch.at(-1) as StoredBusEvent).sequence);
              if (consumeOptions.handleBatch && batch.length < maxBatch && !lingered && !awaited) {
                // A partial batch waits a moment for more, so a bulk writer writes in bulk (not when
                // a publisher waits for one of its events).
                lingered = true;
                await new Promise<void>((resolve) => {
                  const endLinger = () => {
                    clearTimeout(timer);
                    endLingers.delete(endLinger);
                    resolve();
                  };
                  const timer = setTimeout(endLinger, batchLingerMs);
                  endLingers.add(endLinger);
                });
                continue;
              }
              lingered = false;
              const deliveries: BusEvent[] = batch.map((event) => ({
                ...event,
                payload: copy(event.payload),
                redelivered: attempts > 0,
              }));
              try {
                await inFlight.track(deliver(consumeOptions, deliveries));
                durable.acknowledged = (batch.at(-1) as StoredBusEvent).sequence;
                dropAcknowledged();
                settleWaiters();
                attempts = 0;
              } catch {
                attempts++;
                await pause(redeliveryDelayMs);
              }
            }
          })();

          const subscription: Subscription = {
            async stop() {
              stopped = true;
              wake?.();
              await loop;
              wakeConsumers.delete(wakeUp);
              durable.active = false;
              // A stopped consumer handles the event when it runs again: nobody waits for it meanwhile.
              settleWaiters();
              consumers.delete(subscription);
            },
          };
          consumers.add(subscription);
          return subscription;
        },

        async ping() {},

        async drain() {
          for (const [server, subject] of served) removeServer(subject, server);
          served.clear();
          for (const listener of listeners) broadcastListeners.delete(listener);
          listeners.clear();
          await Promise.all([...consumers].map((consumer) => consumer.stop()));
          await inFlight.idle();
        },
      };
    },
  };
}

/** A bus for one process on its own hub: the embedded form's bus. */
export function createInProcessBus(options: InProcessConnectionOptions = {}): Bus {
  return createInProcessHub().connect(options);
}
