export type { HandlerErrorListener } from './answer.ts';
export type {
  Bus,
  BusEvent,
  ConsumeOptions,
  RequestContext,
  RequestHandler,
  RequestOptions,
  Subscription,
} from './bus.ts';
export { defaultRequestTimeoutMs } from './bus.ts';
export {
  createInProcessBus,
  createInProcessHub,
  type InProcessConnectionOptions,
  type InProcessHub,
} from './in-process-bus.ts';
export type { NamespaceRegister } from './namespace-register.ts';
export {
  createNatsBus,
  deleteNamespaceStreams,
  eventStreamName,
  inboxPrefixOf,
  type NatsBus,
  type NatsBusOptions,
  setEventStreamRefusing,
} from './nats-bus.ts';
export { claimStreamName } from './nats-namespace-register.ts';
export { type NatsConnectionSettings, natsConnectionSettings } from './nats-url.ts';
export {
  createRequestSigner,
  defaultSignatureMaxAgeMs,
  parseBusSecret,
  type RefusedRequestListener,
  type RequestSigner,
  type RequestSignerOptions,
  type SignatureCheck,
  type SignatureRefusal,
  type SignedRequest,
  signatureHeader,
} from './request-signature.ts';
