import {
  type AuthenticatedKey,
  type ConsoleSession,
  deleteConsoleSession,
  deleteConsoleSessionByToken,
  deleteEndedConsoleSession,
  deleteEndedConsoleSessions,
  findLiveConsoleSession,
  hashSessionToken,
  insertConsoleSession,
  isWellFormedSessionToken,
  newSessionToken,
  setConsoleSessionEnvironment,
  touchConsoleSession,
  touchedIdleExpiry,
} from '@hallmark/accounts';
import { type Environment, HallmarkError } from '@hallmark/contracts';
import type { Logger } from '@hallmark/runtime';
import type { SqlExecutor } from '@hallmark/sql';
import type { Authenticator } from './authenticator.ts';

/** A live session and the key it acts as: the key's scopes, in the session's environment. */
export interface SessionAuthentication {
  session: ConsoleSession;
  key: AuthenticatedKey;
}

export interface ConsoleSessions {
  /** Signs in: a new session of an authenticated key, in the key's environment, and its token (the cookie's value). */
  start(key: AuthenticatedKey): Promise<{ session: ConsoleSession; token: string }>;
  /**
   * The session of a token and the key it acts as. MISSING_API_KEY when there is no live session;
   * the key's own refusal (REVOKED_API_KEY, EXPIRED_API_KEY, INVALID_API_KEY when it is gone) when
   * the key no longer authenticates: the session is then deleted. A use moves the idle expiry
   * (written at most once a minute).
   */
  authenticate(token: string): Promise<SessionAuthentication>;
  /** Moves a session to another environment (the caller decided it may); MISSING_API_KEY when it is gone meanwhile. */
  switchEnvironment(session: ConsoleSession, environment: Environment): Promise<ConsoleSession>;
  /** Signs out: deletes the token's session, live or not. */
  end(token: string): Promise<void>;
  /** Stops the sweep of ended sessions. */
  stop(): void;
}

const sweepEveryMs = 10 * 60_000;

export const noSession = (why: string) => new HallmarkError('MISSING_API_KEY', `No console session: ${why}. Sign in again.`);

/** The key as a session acts with it: the key's scopes, in the session's environment. */
export function actingKey(key: AuthenticatedKey, session: ConsoleSession): AuthenticatedKey {
  return key.environment === session.environment ? key : Object.freeze({ ...key, environment: session.environment });
}

/**
 * Sessions are read from the database on every use (one indexed look-up by the token's hash), so a
 * sign-out on any replica ends the session everywhere at once; the key is checked through the
 * authenticator, whose cache follows revocations (broadcast and cache epochs) within a second.
 */
export function createConsoleSessions(options: {
  db: SqlExecutor;
  authenticator: Authenticator;
  clock: () => Date;
  log: Logger;
}): ConsoleSessions {
  const sweep = setInterval(() => {
    deleteEndedConsoleSessions(options.db, options.clock()).catch((error: unknown) =>
      options.log.warn({ err: error }, 'ended console sessions not swept; the next sweep tries again'),
    );
  }, sweepEveryMs);
  sweep.unref();

  return {
    async start(key) {
      const token = newSessionToken();
      const session = await insertConsoleSession(options.db, {
        keyId: key.keyId,
        accountId: key.accountId,
        environment: key.environment,
        tokenHash: hashSessionToken(token),
        now: options.clock(),
      });
      return { session, token };
    },

    async authenticate(token) {
      if (!isWellFormedSessionToken(token)) throw noSession('the cookie is not one this API gave out');
      const now = options.clock();
      const tokenHash = hashSessionToken(token);
      const session = await findLiveConsoleSession(options.db, tokenHash, now);
      if (!session) {
        // Ended (not swept yet): gone now, so a clock stepped back does not bring it back.
        await deleteEndedConsoleSession(options.db, tokenHash, now);
        throw noSession('the session ended or never was');
      }
      let key: AuthenticatedKey;
      try {
        key = await options.authenticator.authenticateKeyId(session.keyId);
      } catch (error) {
        // The key no longer authenticates (revoked, expired, deleted): its session ends with it.
        if (error instanceof HallmarkError) await deleteConsoleSession(options.db, session.id);
        throw error;
      }
      const idleExpiresAt = touchedIdleExpiry(session, now);
      if (idleExpiresAt) {
        await touchConsoleSession(options.db, session.id, idleExpiresAt);
        session.idleExpiresAt = idleExpiresAt;
      }
      return { session, key: actingKey(key, session) };
    },

    async switchEnvironment(session, environment) {
      const switched = await setConsoleSessionEnvironment(options.db, session.id, environment);
      if (!switched) throw noSession('the session ended');
      return switched;
    },

    async end(token) {
      if (isWellFormedSessionToken(token)) await deleteConsoleSessionByToken(options.db, hashSessionToken(token));
    },

    stop() {
      clearInterval(sweep);
    },
  };
}
