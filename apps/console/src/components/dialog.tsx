import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { ApiError } from '../api.ts';
import { FormError } from './states.tsx';

/**
 * Gives the focus back to what opened a dialog. After a change made in it, the list the opener sits
 * in reloads (inert meanwhile, LoadedView) and may drop the opener with its row: the focus waits for
 * the list (up to 2 s), else goes to the page's main region, never to nothing. A person who has put
 * the focus somewhere meanwhile keeps it there.
 */
function giveFocusBack(opener: HTMLElement | null, waitedMs = 0): void {
  const focusIsLost = document.activeElement === null || document.activeElement === document.body;
  if (!focusIsLost) return;
  if (opener?.isConnected && !opener.closest('[inert]')) opener.focus();
  else if (opener?.isConnected && waitedMs < 2_000) setTimeout(() => giveFocusBack(opener, waitedMs + 50), 50);
  else document.getElementById('main')?.focus();
}

/**
 * A modal dialog (the native <dialog>: focus kept inside, Escape closes it, focus goes back to what
 * opened it). Shown while mounted.
 */
export function Dialog({ title, onClose, children }: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    const opener = document.activeElement as HTMLElement | null;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      dialog?.close();
      opener?.focus?.();
      // After the render that closed the dialog (and may have made the list inert), look again.
      setTimeout(() => giveFocusBack(opener), 0);
    };
  }, []);
  const titleId = `dialog-${title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      {children}
    </dialog>
  );
}

/**
 * The end of a dialog: the API's refusal (if any), Cancel, and the button that does what the dialog
 * asks, a submit of the dialog's form or `onConfirm`, saying `busyLabel` while it runs.
 */
export function DialogActions({
  error,
  onCancel,
  onConfirm,
  busy,
  label,
  busyLabel,
  danger = false,
}: {
  error: ApiError | undefined;
  onCancel: () => void;
  onConfirm?: () => void;
  busy: boolean;
  label: string;
  busyLabel: string;
  danger?: boolean;
}) {
  return (
    <>
      <FormError error={error} />
      <div class="dialog-actions">
        <button type="button" class="button secondary" onClick={onCancel}>
          Cancel
        </button>
        <button
          type={onConfirm ? 'button' : 'submit'}
          class={danger ? 'button danger' : 'button'}
          onClick={onConfirm}
          disabled={busy}
        >
          {busy ? busyLabel : label}
        </button>
      </div>
    </>
  );
}
