import { type Static, Type } from '@sinclair/typebox';
import { AccountView, EnvironmentSchema, ScopeSchema } from './keys.ts';

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
  }),
});
export type MyAccount = Static<typeof MyAccount>;
