import { type Static, Type } from '@sinclair/typebox';
import { Pagination } from './common.ts';
import { EnvironmentSchema } from './keys.ts';

/**
 * What an account may sign for: one GTIN-14, or a GS1 Company Prefix (4 to 12 digits) that covers
 * every GTIN whose digits after the indicator digit begin with it (docs/SIGNING.md, "Who may sign").
 */
export const GtinClaimInput = Type.Object(
  {
    gtin: Type.Optional(Type.String({ pattern: '^[0-9]{14}$', description: 'one GTIN-14 (with a valid check digit)' })),
    prefix: Type.Optional(
      Type.String({
        pattern: '^[0-9]{4,12}$',
        description: 'a GS1 Company Prefix: every GTIN-14 whose digits 2.. begin with it',
      }),
    ),
    environment: Type.Optional(
      Type.Union([Type.Literal('live'), Type.Literal('test')], {
        description: 'live (the default for grants) covers both environments; test covers the test environment only',
      }),
    ),
  },
  { additionalProperties: false },
);
export type GtinClaimInput = Static<typeof GtinClaimInput>;

export const GtinClaimView = Type.Object({
  id: Type.String(),
  accountId: Type.String(),
  kind: Type.Union([Type.Literal('gtin'), Type.Literal('prefix')]),
  value: Type.String(),
  environment: EnvironmentSchema,
  source: Type.Union([Type.Literal('granted'), Type.Literal('claimed'), Type.Literal('migrated'), Type.Literal('registered')]),
  status: Type.Union([Type.Literal('active'), Type.Literal('revoked')]),
  createdAt: Type.String({ format: 'date-time' }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
export type GtinClaimView = Static<typeof GtinClaimView>;

export const GtinClaimList = Type.Object({ claims: Type.Array(GtinClaimView), pagination: Pagination });
export type GtinClaimList = Static<typeof GtinClaimList>;

export const ListGtinClaimsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('revoked')])),
  },
  { additionalProperties: false },
);
export type ListGtinClaimsQuery = Static<typeof ListGtinClaimsQuery>;

export const GtinClaimIdParam = Type.Object({ claimId: Type.String({ minLength: 1, maxLength: 100 }) });
export const AccountIdParam = Type.Object({ accountId: Type.String({ minLength: 1, maxLength: 100 }) });
