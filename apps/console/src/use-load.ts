import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';

export type Loaded<T> =
  | { state: 'loading'; data?: undefined; error?: undefined }
  | { state: 'ready'; data: T; error?: undefined }
  | { state: 'error'; data?: undefined; error: ApiError };

export const asApiError = (error: unknown): ApiError =>
  error instanceof ApiError ? error : new ApiError(0, 'CONSOLE_ERROR', error instanceof Error ? error.message : String(error));

/**
 * Loads data for a page: loading, then ready or an error (the API's message). `reload` loads again;
 * a change of `inputs` loads anew, and an answer that arrives after a newer request is dropped.
 */
export function useLoad<T>(load: () => Promise<T>, inputs: readonly unknown[]): Loaded<T> & { reload(): void } {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const ticket = ++latest.current;
    setLoaded({ state: 'loading' });
    load().then(
      (data) => ticket === latest.current && setLoaded({ state: 'ready', data }),
      (error: unknown) => ticket === latest.current && setLoaded({ state: 'error', error: asApiError(error) }),
    );
  }, [...inputs, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { ...loaded, reload };
}
