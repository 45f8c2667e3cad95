import type { SqlDatabase, SqlExecutor } from '@hallmark/sql';

export type JsonObject = Record<string, unknown>;

export interface NewEvent {
  type: string;
  data: JsonObject;
  metadata?: JsonObject;
  /**
   * A UUID; one is generated when absent. Appending the same id twice is refused. (The SQL store
   * checks the ids of events stored as rows; an event it packed has an id it made, UUIDv7, which no
   * caller chose: docs/ARCHITECTURE.md, "Packed first events".)
   */
  eventId?: string;
}

export interface StoredEvent {
  eventId: string;
  streamId: string;
  /** 1 for a stream's first event, counting up by one without gaps. */
  streamVersion: number;
  /** Position in the store's global log; unique, and increasing within each stream. */
  globalPosition: number;
  type: string;
  data: JsonObject;
  metadata: JsonObject;
  recordedAt: string;
}

/** The number of events the stream must hold before the append (0: it must not exist), or `any`. */
export type ExpectedVersion = number | 'any';

export interface AppendResult {
  /** The stream's version after the append: pass it as the next expectedVersion. */
  nextExpectedVersion: number;
  events: StoredEvent[];
}

/**
 * Read models written with an append (Emmett's before-commit hook). The SQL store runs `write` in
 * the append's own transaction when `db` is its database: events and read models commit together or
 * not at all, and a `write` that throws (a unique constraint, a stale read-model version) stores no
 * event. A store that cannot share a transaction with `db` (KurrentDB) runs it in a transaction of
 * `db` just after the append; there a subscription is the repair path (docs/ARCHITECTURE.md).
 */
export interface ReadModelWrite {
  db: SqlDatabase;
  write(sql: SqlExecutor, appended: AppendResult): Promise<void>;
}

/** Read-model rows for `EventStore.startStreamsWithRows`: an INSERT … RETURNING <text> AS key on `db`. */
export interface KeyedRowsInsert {
  db: SqlDatabase;
  text: string;
  params: readonly unknown[];
  /**
   * An advisory lock (its name) the statement runs under, shared: taken first in the statement's
   * transaction, so the statement reads what a writer holding it exclusively committed, and such a
   * writer waits for the statements already running (two round trips more).
   */
  sharedLock?: string;
}

export interface AppendOptions {
  expectedVersion: ExpectedVersion;
  readModels?: ReadModelWrite;
}

export interface EventPage {
  events: StoredEvent[];
  /** Where the next read continues. Opaque; store it as a subscription checkpoint. */
  cursor: string;
}

export interface CheckpointStore {
  load(subscription: string): Promise<string | undefined>;
  save(subscription: string, cursor: string): Promise<void>;
}

export interface SubscribeOptions {
  /** Names the checkpoint: a subscription resumes where the last one of its name stopped. */
  name: string;
  /**
   * Called with each batch in order; the checkpoint moves past a batch only after this resolves.
   * `cursor` is where the batch ends: a projection that keeps its checkpoint in its own transaction
   * stores it there (and passes `checkpoints` whose `save` does nothing).
   */
  handle(events: StoredEvent[], cursor: string): Promise<void>;
  /** Told of a failed batch before it is retried. */
  onError?(error: unknown): void;
  batchSize?: number;
  /**
   * After a page smaller than `batchSize`, wait this long before reading on, so that a trickle of
   * events is handled in fewer, larger batches (a projection pays per batch). Adds up to this much delay.
   * The SQL adapter honours it; KurrentDB's live subscription delivers one event at a time.
   */
  lingerMs?: number;
  /** Where checkpoints live; defaults to the store's own. */
  checkpoints?: CheckpointStore;
  /**
   * Only events of these types reach `handle`; the checkpoint still moves past the others (a batch
   * of none of them is handed over empty, so a projection that saves its checkpoint itself saves
   * it). The SQL adapter does not read the data of the others. Without it, every event.
   */
  eventTypes?: readonly string[];
  /**
   * Every event reaches `handle` with its metadata, but only events of these types are sure to bring
   * their data: the SQL adapter does not read the others' data, and hands them over with `data: {}`
   * (other adapters may bring it). For a projection that needs the data of a few types only.
   */
  dataOfTypes?: readonly string[];
}

export interface EventSubscription {
  /** Finishes the batch in hand, saves its checkpoint, and stops. */
  stop(): Promise<void>;
  /**
   * Reads on at once: cuts an idle wait or a linger short (a reader is waiting for the events).
   * A wake during a batch makes the next read start right after it. KurrentDB's live subscription
   * delivers each event as it comes, so there it does nothing.
   */
  wake(): void;
}

/**
 * The event store port. Appends to one stream are atomic and checked against the expected version;
 * a subscription sees every committed event exactly once per checkpoint, in each stream's order,
 * first catching up from its checkpoint and then following live.
 */
export interface EventStore {
  /**
   * True when `readModels` are written in the append's own transaction (the SQL stores): an append
   * and its rows are stored together or not at all. False for KurrentDB, where they follow it.
   */
  readonly atomicReadModels: boolean;
  /** Fails with CONFLICT (details: streamId, expectedVersion, actualVersion) when the stream has moved. */
  append(streamId: string, events: readonly NewEvent[], options: AppendOptions): Promise<AppendResult>;
  /**
   * Starts many new streams in one atomic write (a batch of new assets). Fails with CONFLICT and
   * stores nothing when any of them already exists.
   */
  startStreams(
    streams: ReadonlyArray<{ streamId: string; events: readonly NewEvent[] }>,
    options?: { readModels?: { db: SqlDatabase; write(sql: SqlExecutor): Promise<void> } },
  ): Promise<void>;
  /**
   * Inserts read-model rows and starts the new streams that go with the rows it stored, in one
   * statement of the store's own database: atomic, one round trip, no transaction held open across
   * round trips (so many writers' rows and events can go in one cheap write: code-service's group
   * commit). `rows.text` is an INSERT (parameters `$1`…`$n`, `rows.params`) whose RETURNING gives one
   * text column named `key`; a stream starts only when its `key` came back, so a row the insert left
   * out (`ON CONFLICT DO NOTHING`: a serial taken) starts nothing and stores no event. Resolves with
   * the keys stored. Fails with CONFLICT, storing nothing, when a stream to start exists; any other
   * error of the statement stores nothing either. Only the SQL stores have it (`atomicReadModels`
   * and the same database); use `startStreams` elsewhere.
   */
  startStreamsWithRows?(
    streams: ReadonlyArray<{ key: string; streamId: string; events: readonly NewEvent[] }>,
    rows: KeyedRowsInsert,
  ): Promise<Set<string>>;
  readStream(streamId: string, options?: { afterVersion?: number; limit?: number }): Promise<StoredEvent[]>;
  /** The stream's newest event, or undefined when the stream does not exist. */
  readLastEvent(streamId: string): Promise<StoredEvent | undefined>;
  /**
   * How many events the stream holds as of now (its version; 0 when it does not exist): every
   * append that has answered is counted. One cheap lookup, for readers that must not answer older.
   */
  streamVersion(streamId: string): Promise<number>;
  readAll(options?: { after?: string; limit?: number }): Promise<EventPage>;
  subscribe(options: SubscribeOptions): EventSubscription;
  ping(): Promise<void>;
  close(): Promise<void>;
}
