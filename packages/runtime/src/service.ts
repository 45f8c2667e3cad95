import { hostname } from 'node:os';
import type { Subscription } from '@hallmark/bus';
import { type BackendService, pingRpc, type ServiceName } from '@hallmark/contracts';
import type { Static, TObject } from '@sinclair/typebox';
import type { BaseConfig } from './config.ts';
import type { Infrastructure } from './infrastructure.ts';
import type { Logger } from './logger.ts';
import { serveRpc } from './rpc-server.ts';

export interface ServiceContext<C> {
  name: ServiceName;
  /** Names this replica: host and process id. */
  instance: string;
  /** The service's own settings. */
  config: C;
  /** Settings every process shares (timeouts, namespace, log level). */
  base: BaseConfig;
  log: Logger;
  infra: Infrastructure;
  /** The time now. Tests set it; everything that checks expiry reads it. */
  clock: () => Date;
}

export interface RunningService {
  /** Where an HTTP service listens, once it does. */
  address?: string;
  /** Stops taking work and waits for the work in hand. Infrastructure is closed after, by the host. */
  stop(): Promise<void>;
}

export interface ServiceDefinition<S extends TObject = TObject> {
  name: ServiceName;
  /** The service's own settings, read from the environment and validated before anything starts. */
  configSchema: S;
  start(context: ServiceContext<Static<S>>): Promise<RunningService>;
}

export function defineService<S extends TObject>(definition: ServiceDefinition<S>): ServiceDefinition<S> {
  return definition;
}

export const instanceName = (): string => `${hostname()}:${process.pid}`;

/** Every backend service answers `ping`: the gateway's proof that a request reaches it and comes back. */
export async function servePing(service: BackendService, context: ServiceContext<unknown>): Promise<Subscription> {
  return serveRpc(context.infra.bus, context.log, pingRpc(service), async (request, { requestId, log }) => {
    if (request.delayMs) await new Promise((resolve) => setTimeout(resolve, request.delayMs));
    log.debug('ping');
    return { service, instance: context.instance, requestId, receivedAt: new Date().toISOString() };
  });
}

/** Stops subscriptions in reverse order of their start. */
export async function stopAll(subscriptions: readonly Subscription[]): Promise<void> {
  for (const subscription of [...subscriptions].reverse()) await subscription.stop();
}
