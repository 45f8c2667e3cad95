import type { ComponentChildren } from 'preact';

/**
 * A table that may be wider than a phone: it scrolls sideways inside this region, which takes
 * keyboard focus so it can be scrolled without a mouse (WCAG 2.1.1; axe's scrollable-region-focusable).
 */
export function TableScroll({ labelledBy, children }: { labelledBy: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard to be scrolled
    <section class="table-scroll" aria-labelledby={labelledBy} tabIndex={0}>
      {children}
    </section>
  );
}
