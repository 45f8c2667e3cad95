// The console's session cookie, `hallmark_session` (docs/SECURITY.md, "Console sessions"): read
// from the Cookie header, and written HttpOnly, SameSite=Strict, Path=/, Secure over HTTPS.

export const sessionCookieName = 'hallmark_session';

/**
 * The session token of a Cookie header, or undefined when it holds none. A header naming the
 * cookie more than once is read as the first (browsers send the most specific path first; the
 * console sets it at Path=/ only).
 */
export function sessionTokenOf(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  for (const pair of cookieHeader.split(';')) {
    const separator = pair.indexOf('=');
    if (separator < 0) continue;
    if (pair.slice(0, separator).trim() !== sessionCookieName) continue;
    const value = pair.slice(separator + 1).trim();
    return value === '' ? undefined : value;
  }
  return undefined;
}

/** Set-Cookie for a new session: a browser-session cookie (no Max-Age); the server ends it anyway. */
export function sessionCookie(token: string, secure: boolean): string {
  return `${sessionCookieName}=${token}; HttpOnly; SameSite=Strict; Path=/${secure ? '; Secure' : ''}`;
}

/** Set-Cookie that removes the session cookie (sign-out, or a session that ended). */
export function clearedSessionCookie(secure: boolean): string {
  return `${sessionCookieName}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0${secure ? '; Secure' : ''}`;
}
