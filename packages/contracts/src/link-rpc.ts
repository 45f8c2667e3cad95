import { Type } from '@sinclair/typebox';
import { PrincipalSchema, type RpcDefinition } from './rpc.ts';
import { CreateLinkBody, ItemLinks, LinkList, LinkView, ListLinksQuery, RemovedLinks, UpdateLinkBody } from './schemas/links.ts';

/** The brand's links (code-service, services/code-service/src/handlers/links.ts). */
export const createLinkRpc = {
  service: 'code-service',
  operation: 'createLink',
  // keyId: the API key asking (recorded as createdBy); absent from a gateway before 2026-12-07.
  // keyLimit: the most links that key may have made (a key restricted to some GTINs: the gateway's
  // restrictedKeyLimits); absent, the account's limit alone.
  request: Type.Object({
    principal: PrincipalSchema,
    body: CreateLinkBody,
    keyId: Type.Optional(Type.String()),
    keyLimit: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
  response: LinkView,
} satisfies RpcDefinition;

export const listLinksRpc = {
  service: 'code-service',
  operation: 'listLinks',
  request: Type.Object({ principal: PrincipalSchema, query: ListLinksQuery }),
  response: LinkList,
} satisfies RpcDefinition;

export const updateLinkRpc = {
  service: 'code-service',
  operation: 'updateLink',
  request: Type.Object({
    principal: PrincipalSchema,
    id: Type.String(),
    body: UpdateLinkBody,
    keyId: Type.Optional(Type.String()),
  }),
  response: LinkView,
} satisfies RpcDefinition;

export const deleteLinkRpc = {
  service: 'code-service',
  operation: 'deleteLink',
  request: Type.Object({ principal: PrincipalSchema, id: Type.String(), keyId: Type.Optional(Type.String()) }),
  response: Type.Object({ deleted: Type.Literal(true) }),
} satisfies RpcDefinition;

/** DELETE /links?createdBy=: keyId is the API key asking (recorded as each removal's deletedBy). */
export const removeLinksMadeByRpc = {
  service: 'code-service',
  operation: 'removeLinksMadeBy',
  request: Type.Object({ principal: PrincipalSchema, createdBy: Type.String(), keyId: Type.String() }),
  response: RemovedLinks,
} satisfies RpcDefinition;

/**
 * The links of a scanned item for the public resolver: those of the account that owns the GTIN in
 * the live environment, that apply to the item (GTIN-wide, its lot, its serial), most specific first.
 */
export const itemLinksRpc = {
  service: 'code-service',
  operation: 'itemLinks',
  request: Type.Object({
    gtin: Type.String(),
    lot: Type.Optional(Type.String()),
    serial: Type.Optional(Type.String()),
  }),
  response: ItemLinks,
} satisfies RpcDefinition;
