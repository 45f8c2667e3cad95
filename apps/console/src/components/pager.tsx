import { useEffect, useState } from 'preact/hooks';

/**
 * Cursor paging as the API pages (server-side, any size of list): the cursors of the pages seen so
 * far, so the console can go back; `cursor` is the current page's.
 */
export type CursorPages = ReturnType<typeof useCursorPages>;

/** The cursors walked in the lists of this history entry, by name: the browser keeps them with the entry. */
type RememberedPages = Record<string, { list: string; cursors: Array<string | undefined> }>;

const rememberedPagesOf = (): RememberedPages =>
  ((window.history.state as { cursorPages?: RememberedPages } | null)?.cursorPages ?? {}) as RememberedPages;

/**
 * The pages of a list walked by its cursors: the cursor of the page shown, its number, and moves.
 * `list` names what is listed (a filter, say): another list starts at its first page, from the
 * render that names it, while the page and what it holds (a form, the focus) stay; coming back to a
 * list starts it at its first page again. With `rememberAs`, the page walked to is kept with the
 * browser's history entry, so Back from a row's page shows the list at that page again (before, at
 * its first).
 */
export function useCursorPages(list = '', rememberAs?: string) {
  const [walked, setWalked] = useState<{ list: string; cursors: Array<string | undefined> }>(() => {
    const remembered = rememberAs === undefined ? undefined : rememberedPagesOf()[rememberAs];
    return remembered?.list === list && remembered.cursors.length > 0 ? remembered : { list, cursors: [undefined] };
  });
  const cursorsOf = (held: typeof walked) => (held.list === list ? held.cursors : [undefined]);
  // The pages walked in another list are forgotten once this one is shown (until then, not shown).
  useEffect(() => setWalked((held) => (held.list === list ? held : { list, cursors: [undefined] })), [list]);
  useEffect(() => {
    if (rememberAs === undefined || walked.list !== list) return;
    const state = (window.history.state ?? {}) as Record<string, unknown>;
    window.history.replaceState({ ...state, cursorPages: { ...rememberedPagesOf(), [rememberAs]: walked } }, '');
  }, [walked, list, rememberAs]);
  const cursors = cursorsOf(walked);
  return {
    cursor: cursors[cursors.length - 1],
    page: cursors.length,
    next: (nextCursor: string) => setWalked((held) => ({ list, cursors: [...cursorsOf(held), nextCursor] })),
    previous: () =>
      setWalked((held) => {
        const seen = cursorsOf(held);
        return { list, cursors: seen.length > 1 ? seen.slice(0, -1) : seen };
      }),
    reset: () => setWalked({ list, cursors: [undefined] }),
  };
}

export function Pager({
  label,
  pages,
  nextCursor,
}: {
  label: string;
  /** The list's cursor pages (useCursorPages). */
  pages: CursorPages;
  nextCursor: string | null | undefined;
}) {
  if (pages.page === 1 && !nextCursor) return null;
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" class="button secondary" disabled={pages.page === 1} onClick={pages.previous}>
        Previous page
      </button>
      <span>Page {pages.page}</span>
      <button type="button" class="button secondary" disabled={!nextCursor} onClick={() => nextCursor && pages.next(nextCursor)}>
        Next page
      </button>
    </nav>
  );
}
