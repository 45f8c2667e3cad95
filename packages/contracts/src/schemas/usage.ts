import { type Static, Type } from '@sinclair/typebox';
import { Pagination } from './common.ts';
import { EnvironmentSchema, TierSchema } from './keys.ts';

// What an account has used today (docs/API.md, "Usage").

const Timestamp = Type.String({ format: 'date-time' });

export const UsageView = Type.Object({
  accountId: Type.String(),
  environment: EnvironmentSchema,
  tier: TierSchema,
  day: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'the UTC day counted' }),
  resetsAt: Type.String({ format: 'date-time', description: 'when the daily counts start again (00:00 UTC)' }),
  quotas: Type.Array(
    Type.Object({
      name: Type.Union([Type.Literal('generate'), Type.Literal('verify'), Type.Literal('requests')]),
      used: Type.Integer({ minimum: 0 }),
      limit: Type.Union([Type.Integer(), Type.Null()], { description: 'null: not limited (the tier has no such quota)' }),
    }),
    { description: 'generate: codes made (a batch counts each); verify: verifications; requests: every request' },
  ),
  rateLimit: Type.Object({
    limit: Type.Integer({ description: 'requests per window, every route' }),
    windowSeconds: Type.Integer(),
  }),
});
export type UsageView = Static<typeof UsageView>;

export const ListKeyUsageQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type ListKeyUsageQuery = Static<typeof ListKeyUsageQuery>;

export const KeyUsageView = Type.Object({
  keyId: Type.String(),
  name: Type.String(),
  requestsToday: Type.Integer({
    minimum: 0,
    description: 'requests the key made since 00:00 UTC (refused by a limit: not counted)',
  }),
  requestsThisMinute: Type.Integer({ minimum: 0, description: 'requests the key made in the current clock minute (UTC)' }),
  lastUsedAt: Type.Union([Timestamp, Type.Null()]),
});
export type KeyUsageView = Static<typeof KeyUsageView>;

export const KeyUsageList = Type.Object({
  data: Type.Array(KeyUsageView),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
  pagination: Pagination,
});
export type KeyUsageList = Static<typeof KeyUsageList>;
