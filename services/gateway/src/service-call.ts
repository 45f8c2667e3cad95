import type { Bus } from '@hallmark/bus';
import { HallmarkError, type RpcDefinition, type RpcRequest, type RpcResponse, rpcSubject } from '@hallmark/contracts';

export interface ServiceCaller {
  /** Calls a backend service over the bus; resolves with its answer or throws its error as a HallmarkError. */
  call<D extends RpcDefinition>(definition: D, request: RpcRequest<D>, requestId: string): Promise<RpcResponse<D>>;
}

export function createServiceCaller(bus: Bus, timeoutMs: number): ServiceCaller {
  return {
    async call(definition, request, requestId) {
      const reply = await bus.request(rpcSubject(definition), request, { timeoutMs, requestId });
      if (!reply.ok) throw HallmarkError.fromData(reply.error);
      return reply.value as never;
    },
  };
}
