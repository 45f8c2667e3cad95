import type { BadgeTone } from './components/badge.tsx';
import type { ApiKeyView } from './types.ts';

const day = 24 * 3_600_000;

/** The badge of an API key: revoked, expired, expiring within 24 hours, or active. */
export function keyStatus(key: ApiKeyView, now = Date.now()): { label: string; tone: BadgeTone } {
  if (key.status === 'revoked' || key.revokedAt) return { label: 'Revoked', tone: 'bad' };
  const expiresAt = key.expiresAt ? Date.parse(key.expiresAt) : Number.POSITIVE_INFINITY;
  if (key.status === 'expired' || expiresAt <= now) return { label: 'Expired', tone: 'neutral' };
  if (expiresAt - now <= day) return { label: 'Expires soon', tone: 'warning' };
  return { label: 'Active', tone: 'good' };
}
