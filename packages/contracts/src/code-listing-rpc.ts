import { Type } from '@sinclair/typebox';
import { HallmarkError } from './hallmark-error.ts';
import { PrincipalSchema, type RpcDefinition } from './rpc.ts';
import { CodeList, CodeListItem, CodeStatus, ListCodesQuery } from './schemas/code-listing.ts';

// The codes listing: code-service reads its `codes` table, verify-service what it knows of a code.

export const listCodesRpc = {
  service: 'code-service',
  operation: 'listCodes',
  request: Type.Object({ principal: PrincipalSchema, query: ListCodesQuery }),
  response: CodeList,
} satisfies RpcDefinition;

/**
 * A code the caller may not see, answered as one that does not exist: another account's, and one of a
 * GTIN the calling key is not restricted to, read the same, so an asset id tells nothing.
 */
export const codeNotFound = (assetId: string) =>
  new HallmarkError('NOT_FOUND', 'There is no code with this asset id.', { assetId });

export const getCodeRpc = {
  service: 'code-service',
  operation: 'getCode',
  request: Type.Object({ principal: PrincipalSchema, assetId: Type.String() }),
  response: CodeListItem,
} satisfies RpcDefinition;

export const codeStatusRpc = {
  service: 'verify-service',
  operation: 'codeStatus',
  request: Type.Object({ principal: PrincipalSchema, gtin: Type.String(), serial: Type.String() }),
  response: CodeStatus,
} satisfies RpcDefinition;
