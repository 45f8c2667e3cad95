import { type Static, type TObject, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Reads and validates configuration from the environment. The schema's keys are the variable
 * names. Strings become numbers and booleans where the schema says so; defaults fill gaps.
 * Fails with one line per bad variable, naming it, what it must be, and what it was.
 */
export function readConfig<S extends TObject>(schema: S, env: NodeJS.ProcessEnv = process.env): Static<S> {
  const raw: Record<string, unknown> = {};
  for (const name of Object.keys(schema.properties)) {
    const value = env[name];
    if (value !== undefined && value !== '') raw[name] = value;
  }
  const value = Value.Convert(schema, Value.Default(schema, raw));
  const problems = [...Value.Errors(schema, value)].map((error) => {
    const name = error.path.replace(/^\//, '') || '(config)';
    const property = schema.properties[name] as TSchema | undefined;
    const expected = property?.description ? `${property.description}; ` : '';
    return `${name}: ${expected}${error.message.toLowerCase()} (got ${JSON.stringify(env[name] ?? null)})`;
  });
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n  ${[...new Set(problems)].join('\n  ')}`);
  }
  return value as Static<S>;
}

export const LogLevel = Type.Union(
  ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
  { default: 'info', description: 'one of fatal, error, warn, info, debug, trace, silent' },
);

const url = (protocols: string[], description: string) =>
  Type.String({ pattern: `^(${protocols.join('|')})://`, description: `${description} (${protocols.join('://, ')}://…)` });

/** Settings every process reads. */
export const BaseConfig = Type.Object({
  HALLMARK_LOG_LEVEL: LogLevel,
  HALLMARK_NAMESPACE: Type.String({
    pattern: '^[a-z][a-z0-9_]{0,30}$',
    default: 'hallmark',
    description: 'lower-case letters, digits and _; prefixes NATS subjects, the JetStream stream and Redis keys',
  }),
  HALLMARK_REQUEST_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 60_000,
    default: 5_000,
    description: 'milliseconds from 100 to 60000',
  }),
  HALLMARK_SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 120_000, default: 10_000, description: 'milliseconds' }),
  HALLMARK_ESDB_URL: Type.Optional(url(['kurrentdb', 'esdb', 'kdb'], 'KurrentDB connection string')),
  HALLMARK_BLOB_DIR: Type.Optional(
    Type.String({
      description: 'folder of the filesystem blob store for photos (shared by gateway and auction-service replicas)',
    }),
  ),
  HALLMARK_S3_BUCKET_URL: Type.Optional(url(['https', 'http'], 'S3-compatible bucket URL, path style; photos go there')),
  HALLMARK_S3_REGION: Type.String({ default: 'us-east-1', description: 'region of the S3 bucket' }),
  HALLMARK_S3_ACCESS_KEY_ID: Type.Optional(Type.String({ description: 'S3 access key id' })),
  HALLMARK_S3_SECRET_ACCESS_KEY: Type.Optional(Type.String({ description: 'S3 secret access key' })),
});
export type BaseConfig = Static<typeof BaseConfig>;

/** The distributed form: every shared dependency is a server named here. */
export const DistributedConfig = Type.Composite([
  BaseConfig,
  Type.Object({
    HALLMARK_NATS_URL: url(['nats', 'tls'], 'NATS server URL'),
    HALLMARK_DATABASE_URL: url(['postgres', 'postgresql'], 'PostgreSQL connection URL'),
    HALLMARK_REDIS_URL: url(['redis', 'rediss'], 'Redis URL'),
    HALLMARK_BUS_SECRET: Type.String({
      pattern: '^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$',
      description:
        '32 bytes as 64 hex characters or base64 (openssl rand -hex 32), the same in every process; signs the requests services accept over NATS',
    }),
    HALLMARK_TLS_CA_FILE: Type.Optional(
      Type.String({
        description:
          'PEM file of the certificate authorities trusted for TLS to NATS (tls://), Redis (rediss://) and PostgreSQL (a URL with sslmode=verify-full and no sslrootcert of its own), instead of the system ones',
      }),
    ),
    HALLMARK_PROBE_PORT: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 65_535, description: 'port for /health and /ready of a backend service' }),
    ),
    HALLMARK_BUS_ACCEPT_UNSIGNED: Type.Boolean({
      default: false,
      description:
        'take replies, events and broadcasts that carry no signature over NATS: only during a rolling update from a release of 2026-12-04 or before, whose processes do not sign all of them; then remove it',
    }),
    HALLMARK_EVENT_PACKS: Type.Boolean({
      default: true,
      description:
        'store the first events of generated codes in packs (event store migration 0003) while no process of a release of 2026-12-05 or before (which reads no packs) is connected to the database; false: always as rows',
    }),
    HALLMARK_LINK_FORMS: Type.Boolean({
      default: true,
      description:
        "store a generated code's link as its link form (code-service migration 0009: rebuilt from the code's fields) while no code-service of a release before link forms (which reads the link from the row only) is connected to the database, and its signing key id as that form's or verify-service's number for it (code-service migration 0010, verify-service migration 0012) while no code-service or verify-service of a release before those is; false: always whole",
    }),
    HALLMARK_RELEASE_GATE_SECONDS: Type.Integer({
      minimum: 1,
      maximum: 300,
      default: 10,
      description:
        'seconds between the looks of HALLMARK_EVENT_PACKS and HALLMARK_LINK_FORMS at the sessions connected to the database: once the last process of an older release has gone, new codes are stored the newer way within this long',
    }),
    HALLMARK_NATS_STREAM_REPLICAS: Type.Integer({
      minimum: 1,
      maximum: 5,
      default: 1,
      description:
        'copies JetStream keeps of the event stream (a NATS cluster needs at least as many JetStream servers): 3 survives the loss of a NATS server and its volume',
    }),
    HALLMARK_DATABASE_POOL_MAX: Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 10,
      description:
        'PostgreSQL connections a process pools (each event subscription holds one more, for LISTEN): replicas × (this + 2) must stay under max_connections',
    }),
    // Only a test deployment may run on a made-up master key (master-key-strength.ts).
    HALLMARK_ENVIRONMENT: Type.Union([Type.Literal('production'), Type.Literal('test')], {
      default: 'production',
      description: 'production, or test: only a test deployment may use a trivial HALLMARK_MASTER_KEY (one byte repeated)',
    }),
  }),
]);
export type DistributedConfig = Static<typeof DistributedConfig>;

/** The embedded form: everything in this process, data under one folder. */
export const EmbeddedConfig = Type.Composite([
  BaseConfig,
  Type.Object({
    HALLMARK_DATA_DIR: Type.String({ default: './.hallmark', description: 'folder for the embedded database' }),
    HALLMARK_PGLITE_THREAD: Type.Union([Type.Literal('worker'), Type.Literal('main')], {
      default: 'worker',
      description:
        'where the embedded PostgreSQL (PGlite) runs: worker (a thread of its own, off the event loop that answers requests) or main (on that event loop)',
    }),
    HALLMARK_PGLITE_SHARED_BUFFERS: Type.String({
      default: '128MB',
      // 1 to 1024 MB: PostgreSQL's least is 128kB, and PGlite's WebAssembly memory holds at most 2 GB in all.
      pattern: '^([1-9][0-9]{0,2}|10[01][0-9]|102[0-4])MB$',
      description:
        "the embedded PostgreSQL's buffer cache (shared_buffers), 1MB to 1024MB: less starts faster (PGlite touches all of it at every start) and keeps less of the database in memory",
    }),
  }),
]);
export type EmbeddedConfig = Static<typeof EmbeddedConfig>;

/** The master key, for the services that hold signing keys (code-, auction- and compliance-service). */
export const MasterKeySetting = Type.String({
  pattern: '^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$',
  description: '32 bytes as 64 hex characters or base64; seals the signing keys at rest',
});

/** Where generated links point, for the services that make them (code- and auction-service). */
export const ResolverUrlSetting = Type.String({
  pattern: '^https?://[^/?#]+$',
  default: 'http://localhost:8080',
  description: 'scheme and host of the resolver in generated links, without a path (e.g. https://id.brand.com)',
});
