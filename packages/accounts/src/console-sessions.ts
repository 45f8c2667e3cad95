// The web console's sessions (table console_sessions, accounts migration 0006; docs/SECURITY.md,
// "Console sessions"). The browser holds a random token; only its SHA-256 is stored. The rules of
// time (idle and absolute expiry, when the idle expiry moves) are pure functions here, so they are
// tested without a database; the store functions run one statement each.

import type { Environment } from '@hallmark/contracts';
import { randomHex, sha256Hex } from '@hallmark/crypto';
import type { SqlExecutor } from '@hallmark/sql';

/** A session ends this long after its last use... */
export const sessionIdleMs = 30 * 60_000;
/** ...and this long after sign-in, whatever its use. */
export const sessionLifetimeMs = 12 * 60 * 60_000;
/** The idle expiry is written again only when it moved by at least this much: one write a minute per session at most. */
export const sessionTouchIntervalMs = 60_000;

export interface ConsoleSession {
  id: string;
  keyId: string;
  accountId: string;
  environment: Environment;
  createdAt: Date;
  expiresAt: Date;
  idleExpiresAt: Date;
}

interface SessionRow {
  id: string;
  key_id: string;
  account_id: string;
  environment: Environment;
  created_at: Date | string;
  expires_at: Date | string;
  idle_expires_at: Date | string;
}

const toSession = (row: SessionRow): ConsoleSession => ({
  id: row.id,
  keyId: row.key_id,
  accountId: row.account_id,
  environment: row.environment,
  createdAt: new Date(row.created_at),
  expiresAt: new Date(row.expires_at),
  idleExpiresAt: new Date(row.idle_expires_at),
});

/** A new session token (the cookie's value): 256 bits from the CSPRNG, hex. */
export function newSessionToken(): string {
  return randomHex(32);
}

/** Tokens this API gives out: anything else is no session, without a look-up. */
export function isWellFormedSessionToken(token: string): boolean {
  return /^[0-9a-f]{64}$/.test(token);
}

/** What is stored and looked up: the SHA-256 of the token, hex. */
export function hashSessionToken(token: string): string {
  return sha256Hex(`console-session:${token}`);
}

/** The times of a session signed in at `now`. */
export function sessionTimesAt(now: Date): Pick<ConsoleSession, 'createdAt' | 'expiresAt' | 'idleExpiresAt'> {
  return {
    createdAt: now,
    expiresAt: new Date(now.getTime() + sessionLifetimeMs),
    idleExpiresAt: new Date(now.getTime() + sessionIdleMs),
  };
}

/** Whether the session is live at `now`: before both its idle and its absolute expiry. */
export function isSessionLive(session: Pick<ConsoleSession, 'expiresAt' | 'idleExpiresAt'>, now: Date): boolean {
  return now.getTime() < session.idleExpiresAt.getTime() && now.getTime() < session.expiresAt.getTime();
}

/**
 * The idle expiry a use at `now` moves the session to, or undefined when it need not be written:
 * it moves to `now` + 30 min (never past the absolute expiry), but only once it would move by a
 * minute or more, so a busy session writes at most once a minute. Reaching the absolute expiry is
 * written however little it moves: else a session used every minute ended idle up to a minute
 * before its 12 hours, its last move to the cap never written. An idle expiry a minute or more past
 * `now` + 30 min (the clock stepped back since it was written) moves back to it: 30 minutes after
 * the last use, as the clock now reads it, not the length of the step more.
 */
export function touchedIdleExpiry(session: Pick<ConsoleSession, 'expiresAt' | 'idleExpiresAt'>, now: Date): Date | undefined {
  const cap = session.expiresAt.getTime();
  const next = Math.min(now.getTime() + sessionIdleMs, cap);
  const moved = next - session.idleExpiresAt.getTime();
  return Math.abs(moved) >= sessionTouchIntervalMs || (next === cap && moved > 0) ? new Date(next) : undefined;
}

export async function insertConsoleSession(
  sql: SqlExecutor,
  input: { keyId: string; accountId: string; environment: Environment; tokenHash: string; now: Date },
): Promise<ConsoleSession> {
  const times = sessionTimesAt(input.now);
  const rows = await sql.query<SessionRow>(
    `INSERT INTO console_sessions (id, token_hash, key_id, account_id, environment, created_at, expires_at, idle_expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [
      `ses_${randomHex(10)}`,
      input.tokenHash,
      input.keyId,
      input.accountId,
      input.environment,
      times.createdAt,
      times.expiresAt,
      times.idleExpiresAt,
    ],
  );
  return toSession(rows[0] as SessionRow);
}

/** The session whose token hashes to `tokenHash`, live at `now`; undefined when there is none. */
export async function findLiveConsoleSession(
  sql: SqlExecutor,
  tokenHash: string,
  now: Date,
): Promise<ConsoleSession | undefined> {
  const rows = await sql.query<SessionRow>(
    'SELECT * FROM console_sessions WHERE token_hash = $1 AND idle_expires_at > $2 AND expires_at > $2',
    [tokenHash, now],
  );
  return rows[0] ? toSession(rows[0]) : undefined;
}

/**
 * Moves the idle expiry forward (two replicas touching at once keep the later), or back when it is
 * more than a minute past `idleExpiresAt` (written before the clock stepped back: touchedIdleExpiry).
 */
export async function touchConsoleSession(sql: SqlExecutor, id: string, idleExpiresAt: Date): Promise<void> {
  await sql.query(
    'UPDATE console_sessions SET idle_expires_at = $2 WHERE id = $1 AND (idle_expires_at < $2 OR idle_expires_at >= $3)',
    [id, idleExpiresAt, new Date(idleExpiresAt.getTime() + sessionTouchIntervalMs)],
  );
}

/**
 * Deletes the token's session if it has ended at `now` (a look-up found it not live): it stays ended
 * when the clock then steps back before its end.
 */
export async function deleteEndedConsoleSession(sql: SqlExecutor, tokenHash: string, now: Date): Promise<void> {
  await sql.query('DELETE FROM console_sessions WHERE token_hash = $1 AND (idle_expires_at <= $2 OR expires_at <= $2)', [
    tokenHash,
    now,
  ]);
}

/** Switches a session's environment; the session as it now is, or undefined when it is gone. */
export async function setConsoleSessionEnvironment(
  sql: SqlExecutor,
  id: string,
  environment: Environment,
): Promise<ConsoleSession | undefined> {
  const rows = await sql.query<SessionRow>('UPDATE console_sessions SET environment = $2 WHERE id = $1 RETURNING *', [
    id,
    environment,
  ]);
  return rows[0] ? toSession(rows[0]) : undefined;
}

export async function deleteConsoleSession(sql: SqlExecutor, id: string): Promise<void> {
  await sql.query('DELETE FROM console_sessions WHERE id = $1', [id]);
}

/** Deletes the session of a token (sign-out), live or not. */
export async function deleteConsoleSessionByToken(sql: SqlExecutor, tokenHash: string): Promise<void> {
  await sql.query('DELETE FROM console_sessions WHERE token_hash = $1', [tokenHash]);
}

/** Deletes every session of a key (its key was revoked, expired or deleted). */
export async function deleteConsoleSessionsOfKey(sql: SqlExecutor, keyId: string): Promise<void> {
  await sql.query('DELETE FROM console_sessions WHERE key_id = $1', [keyId]);
}

/** Deletes sessions that ended before `now` (idle expiry is never after the absolute one); how many. */
export async function deleteEndedConsoleSessions(sql: SqlExecutor, now: Date): Promise<number> {
  const rows = await sql.query<{ id: string }>('DELETE FROM console_sessions WHERE idle_expires_at <= $1 RETURNING id', [now]);
  return rows.length;
}
