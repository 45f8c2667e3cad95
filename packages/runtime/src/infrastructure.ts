import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { type BlobStore, createFilesystemBlobStore, createS3BlobStore } from '@hallmark/blob-store';
import { type Bus, createInProcessBus, createNatsBus, createRequestSigner, parseBusSecret } from '@hallmark/bus';
import { type Cache, createJournaledCache, createRedisCache } from '@hallmark/cache';
import { createSqlEventStore, type EventStore, loadKurrentEventStore } from '@hallmark/event-store';
import { createPgliteDatabase, createPostgresDatabase, type SqlDatabase } from '@hallmark/sql';
import { refusalLogger } from './bus-refusal-log.ts';
import { type BaseConfig, ConfigError, type DistributedConfig, type EmbeddedConfig } from './config.ts';
import type { Logger } from './logger.ts';
import { cacheNamespaceRegister, type NamedRegister, namespaceClaimTtlMs } from './namespace-claim.ts';
import type { ReadinessChecks } from './readiness.ts';
import { createKeyFormsGate, createLinkFormsGate, createPacksGate, sessionNameOf } from './release-gates.ts';

/** The adapters a service works with; the same interfaces in both forms. */
export interface Infrastructure {
  form: 'embedded' | 'distributed';
  bus: Bus;
  db: SqlDatabase;
  eventStore: EventStore;
  cache: Cache;
  /** Photos and other large bytes, by SHA-256. */
  blobs: BlobStore;
  readiness: ReadinessChecks;
  /**
   * Whether code-service may store a new code's link as its link form, not whole (release-gates.ts):
   * always in the embedded form (one process of one release).
   */
  linkFormsAllowed: () => Promise<boolean>;
  /**
   * Whether this service (code-service, verify-service) may store a new code's signing key id by
   * number, not whole (release-gates.ts, createKeyFormsGate): always in the embedded form.
   */
  keyFormsAllowed: () => Promise<boolean>;
  /** Drains the bus first (no new work, in-flight work finishes), then closes the stores. */
  close(): Promise<void>;
}

/** S3 when its bucket is configured, else files under HALLMARK_BLOB_DIR (default: `<fallback>`). */
function blobStoreFor(config: BaseConfig, fallbackDir: string): BlobStore {
  if (!config.HALLMARK_S3_BUCKET_URL) return createFilesystemBlobStore(config.HALLMARK_BLOB_DIR ?? fallbackDir);
  if (!config.HALLMARK_S3_ACCESS_KEY_ID || !config.HALLMARK_S3_SECRET_ACCESS_KEY) {
    throw new ConfigError('HALLMARK_S3_ACCESS_KEY_ID and HALLMARK_S3_SECRET_ACCESS_KEY must be set with HALLMARK_S3_BUCKET_URL');
  }
  return createS3BlobStore({
    bucketUrl: config.HALLMARK_S3_BUCKET_URL,
    region: config.HALLMARK_S3_REGION,
    accessKeyId: config.HALLMARK_S3_ACCESS_KEY_ID,
    secretAccessKey: config.HALLMARK_S3_SECRET_ACCESS_KEY,
  });
}

function busErrorLogger(log: Logger) {
  return (error: unknown, context: { subject: string; requestId: string }) =>
    log.error({ err: error, subject: context.subject, requestId: context.requestId }, 'handler failed');
}

/** The distributed form's adapters, and where its namespace is claimed (namespace-claim.ts). */
export interface DistributedInfrastructure extends Infrastructure {
  /** NATS and Redis, which other installations may share. */
  namespaceRegisters(): Promise<NamedRegister[]>;
}

/** NATS, PostgreSQL and Redis from the environment; KurrentDB for events when HALLMARK_ESDB_URL is set. */
export async function connectDistributed(
  config: DistributedConfig,
  service: string,
  log: Logger,
): Promise<DistributedInfrastructure> {
  const bus = await createNatsBus({
    servers: config.HALLMARK_NATS_URL,
    ...(config.HALLMARK_TLS_CA_FILE ? { tlsCaFile: config.HALLMARK_TLS_CA_FILE } : {}),
    name: service,
    prefix: config.HALLMARK_NAMESPACE,
    streamReplicas: config.HALLMARK_NATS_STREAM_REPLICAS,
    onInternalError: busErrorLogger(log),
    signer: createRequestSigner(parseBusSecret(config.HALLMARK_BUS_SECRET)),
    acceptUnsigned: config.HALLMARK_BUS_ACCEPT_UNSIGNED,
    onRefusedRequest: refusalLogger(log),
  });
  // How often the release gates look at the sessions connected (release-gates.ts).
  const gateLooks = { recheckMs: config.HALLMARK_RELEASE_GATE_SECONDS * 1000 };
  const db = createPostgresDatabase({
    connectionString: config.HALLMARK_DATABASE_URL,
    applicationName: sessionNameOf(service),
    maxConnections: config.HALLMARK_DATABASE_POOL_MAX,
    ...(config.HALLMARK_TLS_CA_FILE ? { tlsCaFile: config.HALLMARK_TLS_CA_FILE } : {}),
  });
  const eventStore = config.HALLMARK_ESDB_URL
    ? await loadKurrentEventStore(config.HALLMARK_ESDB_URL)
    : await createSqlEventStore(db, {
        packFirstEvents: config.HALLMARK_EVENT_PACKS ? createPacksGate(db, gateLooks) : false,
      });
  const cache = createRedisCache({
    url: config.HALLMARK_REDIS_URL,
    keyPrefix: `${config.HALLMARK_NAMESPACE}:`,
    connectionName: `${config.HALLMARK_NAMESPACE}:${service}`,
    ...(config.HALLMARK_TLS_CA_FILE ? { tlsCaFile: config.HALLMARK_TLS_CA_FILE } : {}),
  });
  return {
    form: 'distributed',
    bus,
    db,
    eventStore,
    linkFormsAllowed: config.HALLMARK_LINK_FORMS ? createLinkFormsGate(db, gateLooks) : async () => false,
    keyFormsAllowed:
      config.HALLMARK_LINK_FORMS && (service === 'code-service' || service === 'verify-service')
        ? createKeyFormsGate(db, service, gateLooks)
        : async () => false,
    cache,
    blobs: blobStoreFor(config, './.hallmark/blobs'),
    readiness: {
      nats: () => bus.ping(),
      postgres: () => db.ping(),
      redis: () => cache.ping(),
      ...(config.HALLMARK_ESDB_URL ? { kurrentdb: () => eventStore.ping() } : {}),
    },
    async namespaceRegisters() {
      return [
        { store: 'NATS', register: await bus.namespaceRegister(namespaceClaimTtlMs) },
        { store: 'Redis', register: cacheNamespaceRegister(cache, namespaceClaimTtlMs) },
      ];
    },
    async close() {
      await bus.drain();
      await eventStore.close();
      await db.close();
      await cache.close();
    },
  };
}

/** How often an idle event subscription of the embedded form looks again without a notification. */
const embeddedEventPollMs = 2_000;

/**
 * Everything in this process: PGlite under the data folder, the in-process bus, the memory cache
 * written behind into PGlite every 100 ms (counters, scan histories and limits outlive a restart;
 * docs/ARCHITECTURE.md, Embedded durability). The cache's entries expire by `clock`, the same
 * clock the services compute windows with.
 */
export async function createEmbedded(
  config: EmbeddedConfig,
  log: Logger,
  clock: () => Date = () => new Date(),
): Promise<Infrastructure> {
  // Nothing outside this process reaches the in-process bus; its requests are signed all the same
  // (with a secret made at start and kept in memory), so both forms take the same path.
  const bus = createInProcessBus({
    onInternalError: busErrorLogger(log),
    signer: createRequestSigner(randomBytes(32)),
    onRefusedRequest: refusalLogger(log),
  });
  const db = await createPgliteDatabase(join(resolve(config.HALLMARK_DATA_DIR), 'pglite'), {
    thread: config.HALLMARK_PGLITE_THREAD,
    sharedBuffers: config.HALLMARK_PGLITE_SHARED_BUFFERS,
  });
  // Subscriptions are woken by the append's notification, which PGlite delivers in this process
  // and never loses, and PGlite runs one transaction at a time, so an event is readable when its
  // notification comes: the poll is only a backstop. At the default 100 ms the three projections'
  // polls were 30 statements a second in PGlite's thread, idle or not (issue #19).
  const eventStore = await createSqlEventStore(db, { pollIntervalMs: embeddedEventPollMs });
  const cache = await createJournaledCache({
    db,
    now: () => clock().getTime(),
    onError: (error) => log.error({ err: error }, 'cache state not written to the database; retrying'),
  });
  return {
    form: 'embedded',
    bus,
    db,
    eventStore,
    linkFormsAllowed: async () => true,
    keyFormsAllowed: async () => true,
    cache,
    blobs: blobStoreFor(config, join(resolve(config.HALLMARK_DATA_DIR), 'blobs')),
    readiness: { database: () => db.ping() },
    async close() {
      await bus.drain();
      // The cache's last changes go to the database before it closes.
      await cache.close();
      await eventStore.close();
      await db.close();
    },
  };
}
