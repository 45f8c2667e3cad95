import { type Static, Type } from '@sinclair/typebox';
import { EnvironmentSchema, KeyRestrictions, TierSchema } from './keys.ts';

// The web console's sessions (docs/API.md, "Console sessions"; docs/SECURITY.md).

const Timestamp = Type.String({ format: 'date-time' });

export const CreateSessionBody = Type.Object(
  {
    apiKey: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'the API key to sign in with (svc_live_… or svc_test_…); the browser never keeps it',
    }),
  },
  { additionalProperties: false },
);
export type CreateSessionBody = Static<typeof CreateSessionBody>;

export const UpdateSessionBody = Type.Object(
  { environment: EnvironmentSchema },
  { additionalProperties: false, description: 'a live key’s session may switch to test and back; a test key’s never to live' },
);
export type UpdateSessionBody = Static<typeof UpdateSessionBody>;

export const SessionView = Type.Object({
  session: Type.Object({
    id: Type.String(),
    environment: EnvironmentSchema,
    createdAt: Timestamp,
    expiresAt: Type.String({ format: 'date-time', description: '12 hours after sign-in, whatever the use' }),
    idleExpiresAt: Type.String({
      format: 'date-time',
      description: '30 minutes after the last use (moved forward at most once a minute)',
    }),
  }),
  key: Type.Object({
    id: Type.String(),
    name: Type.String(),
    environment: EnvironmentSchema,
    scopes: Type.Array(Type.String()),
    isOperator: Type.Boolean(),
    restrictions: Type.Union([KeyRestrictions, Type.Null()], {
      description: 'the GTINs the key is restricted to (its session acts in the key’s environment only); null: not restricted',
    }),
  }),
  account: Type.Object({ id: Type.String(), name: Type.String(), tier: TierSchema }),
  environments: Type.Array(EnvironmentSchema, {
    description:
      'the environments this session may switch to: ["live","test"] for a live key, ["test"] for a test key, the key’s own for a restricted key',
  }),
});
export type SessionView = Static<typeof SessionView>;
