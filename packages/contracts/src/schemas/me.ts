import { type Static, Type } from '@sinclair/typebox';
import { Pagination } from './common.ts';
import { AccountView, EnvironmentSchema, KeyRestrictions, ScopeSchema } from './keys.ts';

/** GET /accounts/me: the account the calling key belongs to, and the key itself (never its secret). */
export const MyAccount = Type.Object({
  account: Type.Composite([
    AccountView,
    Type.Object({ isOperator: Type.Boolean({ description: 'the operator’s account may provision others' }) }),
  ]),
  key: Type.Object({
    id: Type.String({ examples: ['key_01JD3X6V4Q8ZK2N5R7T9W1Y3A5'] }),
    environment: EnvironmentSchema,
    scopes: Type.Array(ScopeSchema, { description: 'as granted; `*` is every scope of the account' }),
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    restrictions: Type.Union([KeyRestrictions, Type.Null()], {
      description: 'the GTINs the key is restricted to; null: not restricted',
    }),
  }),
});
export type MyAccount = Static<typeof MyAccount>;

/** An account as the operator's listing shows it. */
export const ListedAccount = Type.Composite([AccountView, Type.Object({ isOperator: Type.Boolean() })]);
export type ListedAccount = Static<typeof ListedAccount>;

/** GET /accounts: every account, newest first (operator only). */
export const AccountList = Type.Object({ accounts: Type.Array(ListedAccount), pagination: Pagination });
export type AccountList = Static<typeof AccountList>;

export const ListAccountsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type ListAccountsQuery = Static<typeof ListAccountsQuery>;
