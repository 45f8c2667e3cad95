import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type ApiError, asApiError } from './api.ts';

export type Loaded<T> =
  | { state: 'loading'; data?: undefined; error?: undefined }
  | { state: 'ready'; data: T; error?: undefined }
  | { state: 'error'; data?: undefined; error: ApiError };

/** The same inputs, compared as hooks compare their dependencies (Object.is, item by item). */
export const sameInputs = (a: readonly unknown[], b: readonly unknown[]): boolean =>
  a.length === b.length && a.every((value, index) => Object.is(value, b[index]));

/** What was loaded, and for which inputs. */
export interface LoadedFor<T> {
  inputs: readonly unknown[];
  loaded: Loaded<T>;
}

/**
 * Whether `inputs` differ from what was loaded only by a reload (their last item, the reload's
 * round) while what was loaded is ready: it stays on screen until the new answer replaces it, so a
 * list does not blink to "Loading…" after each change a person makes.
 */
const isReloadOf = <T>(held: LoadedFor<T>, inputs: readonly unknown[]): boolean =>
  held.loaded.state === 'ready' && sameInputs(held.inputs.slice(0, -1), inputs.slice(0, -1));

/**
 * What to show for `inputs` (the page's inputs, then the reload's round): what was loaded for them,
 * or for them before a reload (isReloadOf), otherwise loading. An answer for other inputs (the
 * previous page, the previous search) is never shown as theirs.
 */
export const loadedFor = <T>(held: LoadedFor<T>, inputs: readonly unknown[]): Loaded<T> =>
  sameInputs(held.inputs, inputs) || isReloadOf(held, inputs) ? held.loaded : { state: 'loading' };

/**
 * Loads data for a page: loading, then ready or an error (the API's message). `reload` loads again,
 * keeping what was loaded on screen until the new answer arrives; a change of `inputs` loads anew,
 * and an answer that arrives after a newer request is dropped.
 *
 * From the render in which `inputs` change, the result is 'loading' until the answer for the new
 * inputs arrives: the request starts in an effect, after that render has been painted, so without
 * the check the render would show the new inputs (say the pager's "Page 2") with the old answer
 * (page 1's rows), and for a moment nothing would say it is still loading.
 */
export function useLoad<T>(
  load: () => Promise<T>,
  inputs: readonly unknown[],
): Loaded<T> & { reload(): void /** A reload is under way, what it replaces still shown. */; refreshing: boolean } {
  const [round, setRound] = useState(0);
  const wanted = [...inputs, round];
  const [held, setHeld] = useState<LoadedFor<T>>({ inputs: wanted, loaded: { state: 'loading' } });
  const latest = useRef(0);
  useEffect(() => {
    const ticket = ++latest.current;
    setHeld((before) => (isReloadOf(before, wanted) ? before : { inputs: wanted, loaded: { state: 'loading' } }));
    load().then(
      (data) => ticket === latest.current && setHeld({ inputs: wanted, loaded: { state: 'ready', data } }),
      (error: unknown) =>
        ticket === latest.current && setHeld({ inputs: wanted, loaded: { state: 'error', error: asApiError(error) } }),
    );
  }, wanted);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  const refreshing = !sameInputs(held.inputs, wanted) && isReloadOf(held, wanted);
  return { ...loadedFor(held, wanted), reload, refreshing };
}
