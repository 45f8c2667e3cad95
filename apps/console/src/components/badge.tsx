export type BadgeTone = 'good' | 'warning' | 'neutral' | 'bad';

export function Badge({ tone, children }: { tone: BadgeTone; children: string }) {
  return <span class={`badge badge-${tone}`}>{children}</span>;
}
