import { type Static, Type } from '@sinclair/typebox';
import { environments, scopes, tiers } from '../scopes.ts';
import { Pagination, printableTextPattern } from './common.ts';

const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((value) => Type.Literal(value)));

export const EnvironmentSchema = literals(environments);
export const TierSchema = literals(tiers);
export const ScopeSchema = literals(['*', ...scopes]);

const Name = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: printableTextPattern,
  description: 'shown in listings (the console calls it a description); no control characters or bidi overrides',
  examples: ['Packaging line 3'],
});
const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

/** The most GTINs one key may be restricted to. */
export const maxRestrictedGtins = 100;

/**
 * A key narrowed to some GTINs (spec, Authentication 7): it acts only on codes of these GTINs, and
 * only through the operations that name a GTIN (docs/API.md, "Resource restrictions").
 */
export const KeyRestrictions = Type.Object(
  {
    gtins: Type.Array(
      Type.String({
        pattern: '^[0-9]{8,14}$',
        description:
          'a GTIN of 8 to 14 digits with a valid GS1 check digit, kept as its GTIN-14 (zeros before it); the same GTIN twice is kept once',
      }),
      { minItems: 1, maxItems: maxRestrictedGtins },
    ),
  },
  {
    additionalProperties: false,
    description:
      'restricts the key to these GTINs: it generates, verifies, reports, blocks, links and lists codes of them alone, reads its own account, and is refused every other operation (403 KEY_RESTRICTED). A key made by a restricted key must be restricted within its GTINs. Left out: the key reaches every resource of its account its scopes allow',
  },
);
export type KeyRestrictions = Static<typeof KeyRestrictions>;

export const CreateApiKeyBody = Type.Object(
  {
    name: Name,
    scopes: Type.Array(ScopeSchema, { minItems: 1, uniqueItems: true }),
    expiresIn: Type.Optional(Type.String({ description: '<n>m|h|d|w|y, e.g. 90d; omitted: the key does not expire' })),
    environment: Type.Optional(EnvironmentSchema),
    restrictions: Type.Optional(KeyRestrictions),
  },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

export const RegisterPublicKeyBody = Type.Object(
  {
    name: Name,
    publicKey: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'Ed25519: 32 bytes in base64url, or a PEM "PUBLIC KEY"',
    }),
    algorithm: Type.Literal('Ed25519'),
    proof: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_-]{86}$',
        description:
          'that you hold the private key: its Ed25519 signature (64 bytes, base64url, 86 characters) over the UTF-8 bytes of `hallmark-key-registration:<accountId>:<environment>:<publicKey>`, the account and environment the key is registered for and the key as base64url of its 32 raw bytes (docs/SIGNING.md, "Registering a key"). Optional: with it the key is yours alone (no other account may register it); without it the key verifies your codes but keeps nobody from registering it',
      }),
    ),
    environment: Type.Optional(EnvironmentSchema),
  },
  { additionalProperties: false },
);
export type RegisterPublicKeyBody = Static<typeof RegisterPublicKeyBody>;

/** POST /keys takes either form; a body with `publicKey` registers a public key. */
export const CreateKeyBody = Type.Unsafe<CreateApiKeyBody | RegisterPublicKeyBody>({
  type: 'object',
  if: { type: 'object', required: ['publicKey'] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else, not a thenable.
  then: RegisterPublicKeyBody,
  else: CreateApiKeyBody,
});

export const ApiKeyView = Type.Object({
  id: Type.String(),
  type: Type.Literal('api'),
  name: Type.String(),
  environment: EnvironmentSchema,
  scopes: Type.Array(Type.String()),
  /** The first characters of the secret, to tell keys apart. */
  prefix: Type.String(),
  status: literals(['active', 'expired', 'revoked']),
  createdBy: Type.Union([Type.String(), Type.Null()], {
    description:
      'the id of the API key that created this one; null for an account’s first key and keys made by the operator’s command line. After a key leaks, `GET /keys?createdBy=<its id>` lists the keys it made, to revoke them too',
  }),
  createdAt: Timestamp,
  expiresAt: NullableTimestamp,
  revokedAt: NullableTimestamp,
  lastUsedAt: Type.Union([Timestamp, Type.Null()], {
    description:
      'when the key last authenticated a request (x-api-key or a console session), written by the gateways every 2 s: up to a few seconds behind; null if never',
  }),
  restrictions: Type.Union([KeyRestrictions, Type.Null()], {
    description: 'the GTINs the key is restricted to, as GTIN-14s; null: not restricted',
  }),
});
export type ApiKeyView = Static<typeof ApiKeyView>;

export const CreatedApiKey = Type.Composite([ApiKeyView, Type.Object({ secret: Type.String({ description: 'shown once' }) })]);
export type CreatedApiKey = Static<typeof CreatedApiKey>;

export const VerificationKeyView = Type.Object({
  id: Type.String({ description: 'the key id (kid): its RFC 7638 thumbprint' }),
  type: literals(['public', 'signing']),
  name: Type.Union([Type.String(), Type.Null()]),
  environment: EnvironmentSchema,
  algorithm: Type.Literal('Ed25519'),
  publicKey: Type.String({ description: 'raw public key, base64url' }),
  status: literals(['active', 'retired', 'revoked']),
  createdBy: Type.Union([Type.String(), Type.Null()], {
    description:
      'the id of the API key that registered this public key; null for signing keys (the service’s) and public keys registered before creators were recorded. After a key leaks, `GET /keys?createdBy=<its id>` lists the public keys it registered, to revoke them too',
  }),
  createdAt: Timestamp,
  retiredAt: NullableTimestamp,
  revokedAt: NullableTimestamp,
});
export type VerificationKeyView = Static<typeof VerificationKeyView>;

export const KeyView = Type.Union([ApiKeyView, VerificationKeyView]);
/** What POST /keys answers: a new API key with its secret, or the registered public key. */
export const CreatedKey = Type.Union([CreatedApiKey, VerificationKeyView]);
export type KeyView = Static<typeof KeyView>;

export const ListKeysQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    type: Type.Optional(literals(['api', 'public', 'signing'])),
    createdBy: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'only the keys created by the API key of this id: the API keys it made and the public keys it registered',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListKeysQuery = Static<typeof ListKeysQuery>;

export const KeyList = Type.Object({
  keys: Type.Array(KeyView),
  pagination: Pagination,
  /** Whose keys these are: the calling key's account and environment (the hallmark command checks --account against it). */
  accountId: Type.String({ description: 'the account of the calling key, whose keys these are' }),
  environment: EnvironmentSchema,
});

export const KeyIdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

export const RotateApiKeyBody = Type.Object(
  {
    graceSeconds: Type.Union([Type.Literal(0), Type.Literal(900), Type.Literal(3600), Type.Literal(86400)], {
      description: 'how long the old key keeps working: 0 (stops at once), 900 (15 min), 3600 (1 h) or 86400 (1 day)',
    }),
  },
  { additionalProperties: false },
);
export type RotateApiKeyBody = Static<typeof RotateApiKeyBody>;

/** POST /keys/{id}/rotate: the new key with its secret, and the old key's new expiry. */
export const RotatedApiKey = Type.Composite([
  CreatedApiKey,
  Type.Object({
    replaced: Type.Object({
      id: Type.String(),
      expiresAt: Type.String({
        format: 'date-time',
        description: 'the old key stops working then (now + graceSeconds, or sooner if it expired sooner)',
      }),
    }),
  }),
]);
export type RotatedApiKey = Static<typeof RotatedApiKey>;

export const RevokedKey = Type.Object({
  id: Type.String(),
  type: literals(['api', 'public']),
  status: Type.Literal('revoked'),
  revokedAt: Timestamp,
});
export type RevokedKey = Static<typeof RevokedKey>;

export const Jwks = Type.Object({
  keys: Type.Array(
    Type.Object({
      kty: Type.Literal('OKP'),
      crv: Type.Literal('Ed25519'),
      x: Type.String(),
      kid: Type.String(),
      alg: Type.Literal('EdDSA'),
      use: Type.Literal('sig'),
      hallmark_environment: EnvironmentSchema,
      hallmark_account: Type.String({ description: 'the account whose key this is' }),
      hallmark_key_type: Type.Union([Type.Literal('signing'), Type.Literal('public')], {
        description:
          'signing: a key the service holds and signs with (codes, checkpoints, webhooks); public: a key the account registered and holds the private half of (codes only)',
      }),
      hallmark_gtins: Type.Array(Type.String(), { description: 'GTIN-14s this key may sign codes for' }),
      hallmark_gtin_prefixes: Type.Array(Type.String(), {
        description: 'GS1 Company Prefixes this key may sign codes for (digits 2.. of the GTIN-14 begin with one)',
      }),
      hallmark_signs_unowned: Type.Optional(
        Type.Literal(true, { description: 'the operator’s key: may sign GTINs that no account owns' }),
      ),
      hallmark_retired_at: Type.Optional(
        Type.String({
          format: 'date-time',
          description:
            'a signing key rotated out: when it stopped signing. Codes it signed stay genuine; a checkpoint it dates more than a minute after this, or without a time, is not the service’s (docs/COMPLIANCE.md)',
        }),
      ),
    }),
  ),
  hallmark_owners_without_keys: Type.Optional(
    Type.Array(
      Type.Object({
        hallmark_account: Type.String(),
        hallmark_environment: EnvironmentSchema,
        hallmark_gtins: Type.Array(Type.String()),
        hallmark_gtin_prefixes: Type.Array(Type.String()),
      }),
      {
        description:
          'accounts that own GTINs (or prefixes) in an environment but have no key of it in this set: no code of those GTINs is genuine there, not even one the operator signed before they were granted',
      },
    ),
  ),
});
export type Jwks = Static<typeof Jwks>;

export const CreateAccountBody = Type.Object(
  {
    name: Name,
    tier: TierSchema,
    environment: Type.Optional(EnvironmentSchema),
  },
  { additionalProperties: false },
);
export type CreateAccountBody = Static<typeof CreateAccountBody>;

export const AccountView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  tier: TierSchema,
  createdAt: Timestamp,
});
export type AccountView = Static<typeof AccountView>;

export const CreatedAccount = Type.Object({ account: AccountView, apiKey: CreatedApiKey });
export type CreatedAccount = Static<typeof CreatedAccount>;
