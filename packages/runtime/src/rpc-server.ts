import type { Bus, Subscription } from '@hallmark/bus';
import { HallmarkError, type RpcDefinition, type RpcRequest, type RpcResponse, rpcSubject } from '@hallmark/contracts';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { isDependencyOutage, outageAsUnavailable } from './dependency-outage.ts';
import type { Logger } from './logger.ts';
import { registerContractFormats } from './typebox-formats.ts';

registerContractFormats();

export interface RpcContext {
  requestId: string;
  /** The service's logger with this request's id on every line. */
  log: Logger;
}

/**
 * Serves one RPC on the service's queue group. The payload is checked against the contract first:
 * the bus is a boundary, and a caller other than the gateway may be wrong.
 */
export async function serveRpc<D extends RpcDefinition<TSchema, TSchema>>(
  bus: Bus,
  log: Logger,
  definition: D,
  handler: (request: RpcRequest<D>, context: RpcContext) => Promise<RpcResponse<D>>,
): Promise<Subscription> {
  const checker = TypeCompiler.Compile(definition.request);
  return bus.serve(rpcSubject(definition), { queue: definition.service }, async (payload, { requestId }) => {
    if (!checker.Check(payload)) {
      const fields = [...checker.Errors(payload)].map((error) => ({ field: error.path || '/', message: error.message }));
      throw new HallmarkError('VALIDATION_ERROR', `Invalid ${definition.operation} request.`, { fields });
    }
    // The request's logger is made when first used: most requests log nothing at info.
    let requestLog: Logger | undefined;
    const logOfRequest = () => {
      requestLog ??= log.child({ requestId, rpc: definition.operation });
      return requestLog;
    };
    const started = performance.now();
    let result: RpcResponse<D>;
    try {
      result = await handler(payload as RpcRequest<D>, {
        requestId,
        get log() {
          return logOfRequest();
        },
      });
    } catch (error) {
      // A lost database or Redis connection is an outage to retry (503), not a fault of ours (500).
      if (isDependencyOutage(error)) logOfRequest().warn({ err: error }, 'rpc failed: a store is unreachable');
      throw outageAsUnavailable(error);
    }
    if (log.isLevelEnabled('debug')) logOfRequest().debug({ ms: Math.round(performance.now() - started) }, 'rpc answered');
    return result;
  });
}
