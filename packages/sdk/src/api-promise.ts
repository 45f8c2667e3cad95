/** What a method returns: awaitable for the answer's data, with the raw response when asked, and paging for lists. */
import { InvalidResponseError } from './errors.ts';

/** The answer's data with the HTTP response it came in (its body already read). */
export interface WithResponse<T> {
  data: T;
  response: Response;
  /** The answer's X-Request-Id. */
  requestId: string | undefined;
}

/**
 * A call in flight. `await` it for the data; `.withResponse()` for the data with the `Response`
 * (status, headers such as `X-RateLimit-Remaining` or `Idempotent-Replayed`).
 */
export class APIPromise<T> implements PromiseLike<T> {
  readonly #answer: Promise<WithResponse<T>>;
  #data: Promise<T> | undefined;

  constructor(answer: Promise<WithResponse<T>>) {
    this.#answer = answer;
  }

  /** The data and the response it came in. */
  withResponse(): Promise<WithResponse<T>> {
    return this.#answer;
  }

  #dataPromise(): Promise<T> {
    this.#data ??= this.#answer.then((answer) => answer.data);
    return this.#data;
  }

  // biome-ignore lint/suspicious/noThenProperty: an APIPromise is awaited like the Promise it stands for
  then<R1 = T, R2 = never>(
    onFulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#dataPromise().then(onFulfilled, onRejected);
  }

  catch<R = never>(onRejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.#dataPromise().catch(onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<T> {
    return this.#dataPromise().finally(onFinally);
  }
}

/**
 * A cursor-paged list. `await` it for the first page; `for await (const item of …)` for every item of
 * every page, fetching the next page (`pagination.nextCursor`) as the loop reaches it; `.pages()` for
 * the pages themselves.
 */
export class PagePromise<Page extends { pagination: { nextCursor: string | null; hasMore?: boolean } }, Item>
  extends APIPromise<Page>
  implements AsyncIterable<Item>
{
  readonly #itemsField: string;
  readonly #nextPage: (cursor: string) => APIPromise<Page>;
  readonly #firstCursor: string | undefined;

  /** `firstCursor`: the cursor the first page was asked for with, if any. */
  constructor(
    first: Promise<WithResponse<Page>>,
    itemsField: string,
    nextPage: (cursor: string) => APIPromise<Page>,
    firstCursor?: string,
  ) {
    super(first);
    this.#itemsField = itemsField;
    this.#nextPage = nextPage;
    this.#firstCursor = firstCursor;
  }

  /**
   * Every page, the first included, until one says there is no next. A page may be empty and still
   * lead on (the server may skip rows); one whose next cursor was sent before (the page's own, or
   * one of a cycle A → B → A) would lead round the same pages for ever, and throws
   * `InvalidResponseError` instead.
   */
  async *pages(): AsyncGenerator<Page, void, undefined> {
    let answer = await this.withResponse();
    const sent = new Set<string>(this.#firstCursor === undefined ? [] : [this.#firstCursor]);
    for (;;) {
      // Not a page (no `pagination` object, a cursor that is not text): an answer the API never
      // gives, so no item of it is handed on, and no cursor of another type is sent (an object's
      // text is the same every time, `[object Object]`, while each page's object is a new one).
      const cursor = cursorOf(answer);
      yield answer.data;
      if (cursor === null || answer.data.pagination.hasMore === false) return;
      if (sent.has(cursor)) throw repeatedCursorError(cursor, answer);
      sent.add(cursor);
      answer = await this.#nextPage(cursor).withResponse();
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    for await (const page of this.pages()) {
      const items = (page as unknown as Record<string, unknown>)[this.#itemsField];
      if (Array.isArray(items)) yield* items as Item[];
    }
  }
}

/** The page's next cursor (null at the end); throws InvalidResponseError for an answer that is not a page. */
function cursorOf(answer: WithResponse<unknown>): string | null {
  const refuse = (message: string) =>
    new InvalidResponseError({
      message,
      status: answer.response.status,
      headers: answer.response.headers,
      requestId: answer.requestId,
    });
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
  const pagination = isObject(answer.data) ? answer.data.pagination : undefined;
  if (!isObject(pagination)) throw refuse('The answer is not a page of a list: it has no pagination object.');
  const cursor = pagination.nextCursor;
  if (cursor === null || cursor === undefined) return null;
  if (typeof cursor === 'string') return cursor;
  throw refuse(
    `The page's next cursor is ${Array.isArray(cursor) ? 'an array' : typeof cursor}, not text: it cannot be followed.`,
  );
}

function repeatedCursorError(cursor: string, answer: WithResponse<unknown>): InvalidResponseError {
  return new InvalidResponseError({
    message: `The next cursor ${JSON.stringify(cursor)} was sent before: following it would fetch the same pages for ever.`,
    status: answer.response.status,
    headers: answer.response.headers,
    requestId: answer.requestId,
  });
}
