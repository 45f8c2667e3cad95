/**
 * The methods' argument and answer types, read off the generated types (generated/openapi.ts) and
 * the operation table (generated/operations.ts), so they follow the OpenAPI document.
 */
import type { operations } from './generated/openapi.ts';
import type { OperationId, operationTable } from './generated/operations.ts';

type Table = typeof operationTable;
type Operation<K extends OperationId> = operations[K];
type Defined<T> = Exclude<T, undefined>;
// biome-ignore lint/complexity/noBannedTypes: `{}` is the neutral element of the intersections below
type Empty = {};
/** A parameter group (`path`, `query`) as an object type; `{}` when the operation has none. */
type Part<T> = [Defined<T>] extends [never] ? Empty : Defined<T>;

/** A file to upload: the SDK keeps it whole, so every retry sends the same bytes again. */
export type Uploadable = Blob | Uint8Array | ArrayBuffer;

type PathParams<K extends OperationId> = Part<Operation<K>['parameters']['path']>;
type QueryParams<K extends OperationId> = Part<Operation<K>['parameters']['query']>;
type BodyContent<K extends OperationId> = Defined<Operation<K>['requestBody']> extends { content: infer C } ? C : never;
type BodyOf<K extends OperationId> = BodyContent<K>[keyof BodyContent<K>];
type BodyOptional<K extends OperationId> = undefined extends Operation<K>['requestBody'] ? true : false;

type FileFields<K extends OperationId> = Table[K]['fileFields'][number];

type BodyParams<K extends OperationId> = Table[K]['body'] extends 'fields' | 'form'
  ? BodyOptional<K> extends true
    ? Partial<BodyOf<K>>
    : BodyOf<K>
  : Table[K]['body'] extends 'json'
    ? BodyOptional<K> extends true
      ? { body?: BodyOf<K> }
      : { body: BodyOf<K> }
    : Table[K]['body'] extends 'multipart'
      ? Omit<BodyOf<K>, FileFields<K>> & { [F in FileFields<K>]: Uploadable }
      : Table[K]['body'] extends 'raw'
        ? { body: Uploadable | string }
        : Empty;

/**
 * A method's one argument: the path parameters, the query parameters and the body's fields side by
 * side (`{ id }`, `{ limit, cursor }`, `{ gtin, serialNumber }`); a body that is not an object of
 * known fields (raw bytes, CSV text, free-form JSON) goes in `body`.
 */
export type Params<K extends OperationId> = PathParams<K> & QueryParams<K> & BodyParams<K>;

type Responses<K extends OperationId> = Operation<K>['responses'];
type SuccessStatus<K extends OperationId> = Extract<keyof Responses<K>, 200 | 201 | 202 | 203 | 206>;
type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : never;

/** What a method resolves to: the parsed JSON, text (pages, SVG, CSS), bytes (images) or nothing (204). */
export type Result<K extends OperationId> = Table[K]['response'] extends 'json'
  ? { [S in SuccessStatus<K>]: JsonOf<Responses<K>[S]> }[SuccessStatus<K>]
  : Table[K]['response'] extends 'text'
    ? string
    : Table[K]['response'] extends 'binary'
      ? Uint8Array
      : undefined;

/** The operations that are cursor-paged lists. */
export type PagedOperationId = { [K in OperationId]: Table[K]['pageItems'] extends string ? K : never }[OperationId];

/** One item of a paged list (a key of `keys.list`). */
export type PageItem<K extends OperationId> = Table[K]['pageItems'] extends infer F extends string
  ? Result<K> extends { [P in F]: readonly (infer I)[] }
    ? I
    : never
  : never;

/** Options of one call, beside the client's. */
export interface RequestOptions {
  /** Aborts the call (and any retry still to come). */
  signal?: AbortSignal;
  /** Milliseconds each attempt may take (the client's `timeout` otherwise). */
  timeout?: number;
  /** Retries after the first attempt (the client's `maxRetries` otherwise). */
  maxRetries?: number;
  /** The largest answer this call reads, in bytes (the client's `maxResponseBytes` otherwise): `Infinity` for no bound. */
  maxResponseBytes?: number;
  /**
   * The Idempotency-Key to send on every attempt (an operation that takes one gets a fresh one per
   * call otherwise). Sent on any operation, but only where the operation takes one does it make a
   * retry after a 5xx or a lost answer safe.
   */
  idempotencyKey?: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
}
