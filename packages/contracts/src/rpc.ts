import type { Static, TSchema } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { EnvironmentSchema, VerificationKeyView } from './schemas/keys.ts';
import { PingRequest, PingResponse } from './schemas/system.ts';
import type { BackendService } from './services.ts';

/**
 * A request/reply operation a backend service answers over the bus. The subject is
 * `rpc.<service>.<operation>`; replicas of a service share it through the queue group `<service>`.
 */
export interface RpcDefinition<Req extends TSchema = TSchema, Res extends TSchema = TSchema> {
  service: BackendService;
  operation: string;
  request: Req;
  response: Res;
}

export type RpcRequest<D> = D extends RpcDefinition<infer Req, TSchema> ? Static<Req> : never;
export type RpcResponse<D> = D extends RpcDefinition<TSchema, infer Res> ? Static<Res> : never;

export function rpcSubject(definition: Pick<RpcDefinition, 'service' | 'operation'>): string {
  return `rpc.${definition.service}.${definition.operation}`;
}

export function pingRpc(service: BackendService): RpcDefinition<typeof PingRequest, typeof PingResponse> {
  return { service, operation: 'ping', request: PingRequest, response: PingResponse };
}

/** The caller as the gateway established it; every RPC that touches account data carries it. */
export const PrincipalSchema = Type.Object({ accountId: Type.String(), environment: EnvironmentSchema });

export const rotateSigningKeyRpc = {
  service: 'code-service',
  operation: 'rotateSigningKey',
  request: Type.Object({ principal: PrincipalSchema }),
  response: VerificationKeyView,
} satisfies RpcDefinition;
