import { useState } from 'preact/hooks';

/**
 * Cursor paging as the API pages (server-side, any size of list): the cursors of the pages seen so
 * far, so the console can go back; `cursor` is the current page's.
 */
export type CursorPages = ReturnType<typeof useCursorPages>;

export function useCursorPages() {
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const cursor = cursors[cursors.length - 1];
  return {
    cursor,
    page: cursors.length,
    next: (nextCursor: string) => setCursors((seen) => [...seen, nextCursor]),
    previous: () => setCursors((seen) => (seen.length > 1 ? seen.slice(0, -1) : seen)),
    reset: () => setCursors([undefined]),
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
