import { type ErrorData, ok, type Result, toHallmarkError } from '@hallmark/contracts';
import type { RequestContext, RequestHandler } from './bus.ts';

export type HandlerErrorListener = (error: unknown, context: RequestContext) => void;

/** Runs a handler and turns its outcome into the reply value that crosses the bus. */
export async function answer(
  handler: RequestHandler,
  payload: unknown,
  context: RequestContext,
  onInternalError?: HandlerErrorListener,
): Promise<Result<unknown, ErrorData>> {
  try {
    return ok(await handler(payload, context));
  } catch (error) {
    const normalised = toHallmarkError(error);
    if (normalised.code === 'INTERNAL_ERROR') onInternalError?.(error, context);
    return { ok: false, error: normalised.toData() };
  }
}

/** Counts handlers in flight so a drain can wait for them. */
export class InFlight {
  #count = 0;
  #idle: Array<() => void> = [];

  async track<T>(work: Promise<T>): Promise<T> {
    this.#count++;
    try {
      return await work;
    } finally {
      this.#count--;
      if (this.#count === 0) for (const resolve of this.#idle.splice(0)) resolve();
    }
  }

  idle(): Promise<void> {
    return this.#count === 0 ? Promise.resolve() : new Promise((resolve) => this.#idle.push(resolve));
  }
}
