const unitMs = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 } as const;
const pattern = /^([1-9][0-9]{0,5})(m|h|d|w|y)$/;
const longestMs = 10 * unitMs.y;

export type ExpiresInResult = { ok: true; milliseconds: number } | { ok: false; message: string };

/** `expiresIn` of POST /keys: a positive whole number and a unit, m h d w or y, at most ten years. */
export function parseExpiresIn(text: string): ExpiresInResult {
  const match = pattern.exec(text);
  if (!match?.[1] || !match[2]) {
    return { ok: false, message: 'must be a whole number followed by m, h, d, w or y (for example 90d)' };
  }
  const milliseconds = Number(match[1]) * unitMs[match[2] as keyof typeof unitMs];
  if (milliseconds > longestMs) return { ok: false, message: 'must be at most 10 years (10y)' };
  return { ok: true, milliseconds };
}
