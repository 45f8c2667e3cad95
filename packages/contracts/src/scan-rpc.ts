import { Type } from '@sinclair/typebox';
import { PrincipalSchema, type RpcDefinition } from './rpc.ts';
import {
  BlockList,
  BlockView,
  CreateBlockBody,
  ListBlocksQuery,
  ListScansQuery,
  RemovedBlocks,
  ScanAggregates,
  ScanAggregatesQuery,
  ScanCountries,
  ScanCountriesQuery,
  ScanList,
  TopCodes,
  TopCodesQuery,
} from './schemas/scans.ts';

// The scans API and the blocklist (verify-service, services/verify-service/src/handlers/scans.ts and blocklist.ts).

export const listScansRpc = {
  service: 'verify-service',
  operation: 'listScans',
  request: Type.Object({ principal: PrincipalSchema, query: ListScansQuery }),
  response: ScanList,
} satisfies RpcDefinition;

export const scanAggregatesRpc = {
  service: 'verify-service',
  operation: 'scanAggregates',
  request: Type.Object({ principal: PrincipalSchema, query: ScanAggregatesQuery }),
  response: ScanAggregates,
} satisfies RpcDefinition;

export const topScannedCodesRpc = {
  service: 'verify-service',
  operation: 'topScannedCodes',
  request: Type.Object({ principal: PrincipalSchema, query: TopCodesQuery }),
  response: TopCodes,
} satisfies RpcDefinition;

export const scanCountriesRpc = {
  service: 'verify-service',
  operation: 'scanCountries',
  request: Type.Object({ principal: PrincipalSchema, query: ScanCountriesQuery }),
  response: ScanCountries,
} satisfies RpcDefinition;

const client = Type.Object({ keyId: Type.String(), address: Type.String() });

export const createBlocksRpc = {
  service: 'verify-service',
  operation: 'createBlocks',
  request: Type.Object({
    principal: PrincipalSchema,
    client,
    blocks: Type.Array(CreateBlockBody),
    // A chunk of POST /blocklist/bulk sent with an Idempotency-Key: its name (the gateway's hash of
    // the API key, the Idempotency-Key, the chunk's place and its lines). The chunk's results are kept
    // under it, and a chunk sent again under it is answered them instead of blocking its lines again.
    chunkKey: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    // The most active blocks the asking key may hold (a key restricted to some GTINs: the gateway's
    // restrictedKeyLimits); absent, the account's limit alone.
    keyLimit: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
  response: Type.Object({
    results: Type.Array(
      Type.Union([
        Type.Object({ block: BlockView }),
        Type.Object({
          error: Type.Object({
            code: Type.String(),
            message: Type.String(),
            details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          }),
        }),
      ]),
    ),
  }),
} satisfies RpcDefinition;

export const listBlocksRpc = {
  service: 'verify-service',
  operation: 'listBlocks',
  request: Type.Object({ principal: PrincipalSchema, query: ListBlocksQuery }),
  response: BlockList,
} satisfies RpcDefinition;

export const removeBlocksMadeByRpc = {
  service: 'verify-service',
  operation: 'removeBlocksMadeBy',
  request: Type.Object({ principal: PrincipalSchema, client, createdBy: Type.String() }),
  response: RemovedBlocks,
} satisfies RpcDefinition;

export const deleteBlockRpc = {
  service: 'verify-service',
  operation: 'deleteBlock',
  request: Type.Object({ principal: PrincipalSchema, client, blockId: Type.String() }),
  response: BlockView,
} satisfies RpcDefinition;
