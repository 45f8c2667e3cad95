import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';

export type Loaded<T> =
  | { state: 'loading'; data?: undefined; error?: undefined }
  | { state: 'ready'; data: T; error?: undefined }
  | { state: 'error'; data?: undefined; error: ApiError };

export const asApiError = (error: unknown): ApiError =>
  error instanceof ApiError ? error : new ApiError(0, 'CONSOLE_ERROR', error instanceof Error ? error.message : String(error));

/** The same inputs, compared as hooks compare their dependencies (Object.is, item by item). */
export const sameInputs = (a: readonly unknown[], b: readonly unknown[]): boolean =>
  a.length === b.length && a.every((value, index) => Object.is(value, b[index]));

/** What was loaded, and for which inputs. */
export interface LoadedFor<T> {
  inputs: readonly unknown[];
  loaded: Loaded<T>;
}

/**
 * What to show for `inputs`: what was loaded if it was loaded for these inputs, otherwise loading.
 * An answer for other inputs (the previous page, the previous search) is never shown as theirs.
 */
export const loadedFor = <T>(held: LoadedFor<T>, inputs: readonly unknown[]): Loaded<T> =>
  sameInputs(held.inputs, inputs) ? held.loaded : { state: 'loading' };

/**
 * Loads data for a page: loading, then ready or an error (the API's message). `reload` loads again;
 * a change of `inputs` loads anew, and an answer that arrives after a newer request is dropped.
 *
 * From the render in which `inputs` change, the result is 'loading' until the answer for the new
 * inputs arrives: the request starts in an effect, after that render has been painted, so without
 * the check the render would show the new inputs (say the pager's "Page 2") with the old answer
 * (page 1's rows), and for a moment nothing would say it is still loading.
 */
export function useLoad<T>(load: () => Promise<T>, inputs: readonly unknown[]): Loaded<T> & { reload(): void } {
  const [round, setRound] = useState(0);
  const wanted = [...inputs, round];
  const [held, setHeld] = useState<LoadedFor<T>>({ inputs: wanted, loaded: { state: 'loading' } });
  const latest = useRef(0);
  useEffect(() => {
    const ticket = ++latest.current;
    setHeld({ inputs: wanted, loaded: { state: 'loading' } });
    load().then(
      (data) => ticket === latest.current && setHeld({ inputs: wanted, loaded: { state: 'ready', data } }),
      (error: unknown) =>
        ticket === latest.current && setHeld({ inputs: wanted, loaded: { state: 'error', error: asApiError(error) } }),
    );
  }, wanted);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { ...loadedFor(held, wanted), reload };
}
