import type { Bus } from '@hallmark/bus';
import { HallmarkError, type RpcDefinition, type RpcRequest, type RpcResponse, rpcSubject } from '@hallmark/contracts';

export interface ServiceCaller {
  /** Calls a backend service over the bus; resolves with its answer or throws its error as a HallmarkError. */
  call<D extends RpcDefinition>(definition: D, request: RpcRequest<D>, requestId: string): Promise<RpcResponse<D>>;
}

/**
 * Whether a call that failed may still have done its work: the service did not answer in time, or
 * the bus closed first, and it may have acted after the gateway stopped waiting. Such work keeps its
 * quota: a keyed retry is answered what it made, and given back what it spends again (madeBefore).
 */
export function mayHaveActed(error: unknown): boolean {
  if (!(error instanceof HallmarkError) || error.code !== 'SERVICE_UNAVAILABLE') return false;
  const reason = error.details?.reason;
  return reason === 'timeout' || reason === 'closed';
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
