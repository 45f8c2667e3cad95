import type { ComponentChildren } from 'preact';

export type BadgeTone = 'good' | 'warning' | 'neutral' | 'bad';

export function Badge({ tone, children }: { tone: BadgeTone; children: ComponentChildren }) {
  return <span class={`badge badge-${tone}`}>{children}</span>;
}
