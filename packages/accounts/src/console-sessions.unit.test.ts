import { describe, expect, it } from 'vitest';
import {
  hashSessionToken,
  isSessionLive,
  isWellFormedSessionToken,
  newSessionToken,
  sessionTimesAt,
  touchedIdleExpiry,
} from './console-sessions.ts';

const at = (iso: string) => new Date(iso);

describe('console session times', () => {
  const signedIn = sessionTimesAt(at('2026-01-15T09:00:00Z'));

  it('end 30 minutes after sign-in when unused, and 12 hours after it at the latest', () => {
    expect(signedIn.idleExpiresAt.toISOString()).toBe('2026-01-15T09:30:00.000Z');
    expect(signedIn.expiresAt.toISOString()).toBe('2026-01-15T21:00:00.000Z');
    expect(isSessionLive(signedIn, at('2026-01-15T09:29:59Z'))).toBe(true);
    expect(isSessionLive(signedIn, at('2026-01-15T09:30:00Z'))).toBe(false);
    expect(isSessionLive({ ...signedIn, idleExpiresAt: at('2026-01-15T23:00:00Z') }, at('2026-01-15T21:00:00Z'))).toBe(false);
  });

  it('move the idle expiry only when it moves by a minute or more, never past the absolute expiry', () => {
    expect(touchedIdleExpiry(signedIn, at('2026-01-15T09:00:59Z'))).toBeUndefined();
    expect(touchedIdleExpiry(signedIn, at('2026-01-15T09:01:00Z'))?.toISOString()).toBe('2026-01-15T09:31:00.000Z');
    const late = { ...signedIn, idleExpiresAt: at('2026-01-15T20:50:00Z') };
    expect(touchedIdleExpiry(late, at('2026-01-15T20:45:00Z'))?.toISOString()).toBe('2026-01-15T21:00:00.000Z');
    expect(touchedIdleExpiry({ ...signedIn, idleExpiresAt: signedIn.expiresAt }, at('2026-01-15T20:59:00Z'))).toBeUndefined();
    // The last move, to the absolute expiry, is written though it is less than a minute.
    const nearCap = { ...signedIn, idleExpiresAt: at('2026-01-15T20:59:30Z') };
    expect(touchedIdleExpiry(nearCap, at('2026-01-15T20:31:00Z'))?.toISOString()).toBe('2026-01-15T21:00:00.000Z');
  });

  // A clock stepped back two hours left the idle expiry two hours and a half away.
  it('move the idle expiry back to 30 minutes after a use when it lies further ahead (the clock stepped back)', () => {
    const ahead = { ...signedIn, idleExpiresAt: at('2026-01-15T11:30:00Z') };
    expect(touchedIdleExpiry(ahead, at('2026-01-15T09:10:00Z'))?.toISOString()).toBe('2026-01-15T09:40:00.000Z');
    const lessThanAMinute = { ...signedIn, idleExpiresAt: at('2026-01-15T09:40:30Z') };
    expect(touchedIdleExpiry(lessThanAMinute, at('2026-01-15T09:10:00Z'))).toBeUndefined();
  });
});

describe('console session tokens', () => {
  it('are 256 random bits in hex, stored only as a hash', () => {
    const token = newSessionToken();
    expect(isWellFormedSessionToken(token)).toBe(true);
    expect(newSessionToken()).not.toBe(token);
    expect(hashSessionToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashSessionToken(token)).not.toContain(token);
    expect(isWellFormedSessionToken(`${token}0`)).toBe(false);
    expect(isWellFormedSessionToken(token.toUpperCase())).toBe(false);
  });
});
