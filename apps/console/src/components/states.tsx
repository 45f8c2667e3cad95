import type { ComponentChildren } from 'preact';
import type { ApiError } from '../api.ts';
import type { Loaded } from '../use-load.ts';

export function Loading({ what }: { what: string }) {
  return (
    <p class="state state-loading" role="status">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state state-empty">{children}</p>;
}

/** A failed call: the API's own message and code, and a way to try again. */
export function ErrorMessage({ error, retry }: { error: ApiError; retry?: () => void }) {
  return (
    <div class="state state-error" role="alert">
      <p>
        <strong>Failed:</strong> {error.message} <span class="code">({error.code})</span>
      </p>
      {/* A limit that resets in minutes or hours (its message says when) would only refuse again now. */}
      {retry && (error.retryAfterSeconds === undefined || error.retryAfterSeconds <= 60) && (
        <button type="button" class="button secondary" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

/** Loading, error, empty or the content: the four states every list and page has (and the content while it reloads). */
export function LoadedView<T>({
  loaded,
  what,
  isEmpty,
  empty,
  children,
}: {
  loaded: Loaded<T> & { reload(): void; refreshing?: boolean };
  what: string;
  isEmpty?: (data: T) => boolean;
  empty?: ComponentChildren;
  children: (data: T) => ComponentChildren;
}) {
  if (loaded.state === 'loading') return <Loading what={what} />;
  if (loaded.state === 'error') return <ErrorMessage error={loaded.error} retry={loaded.reload} />;
  if (isEmpty?.(loaded.data)) return <Empty>{empty ?? `No ${what} yet.`}</Empty>;
  // While a reload runs (after a change the person made), what it replaces stays on screen but
  // inert: a row just revoked or decided cannot be acted on again before the new rows arrive. The
  // wrapper is always there (display: contents), so a reload remounts nothing; the status region
  // is always there too, so screen readers announce the text put in it.
  return (
    <>
      <div class="loaded-content" inert={loaded.refreshing === true}>
        {children(loaded.data)}
      </div>
      <p class={loaded.refreshing ? 'state-loading visually-hidden' : 'visually-hidden'} role="status">
        {loaded.refreshing ? `Updating ${what}…` : ''}
      </p>
    </>
  );
}

/** Where the signed-in key's scopes hide something: say what and why, instead of a silent gap. */
export function HiddenByScope({ what, scope }: { what: string; scope: string }) {
  return (
    <p class="state state-hidden">
      {what} is hidden: the key you signed in with does not hold the <span class="code">{scope}</span> scope.
    </p>
  );
}

/** A refused action, next to the form or button that asked: the API's message and code. Nothing when there is none. */
export function FormError({ error }: { error: ApiError | undefined }) {
  if (!error) return null;
  return (
    <p class="form-error" role="alert">
      {error.message} <span class="code">({error.code})</span>
    </p>
  );
}
