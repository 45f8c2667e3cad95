// The console's session cookie (docs/SECURITY.md, "Console sessions"): read from the Cookie header,
// and written HttpOnly, SameSite=Strict, Path=/. Over HTTPS it is `__Host-hallmark_session`, Secure:
// a browser takes a `__Host-` cookie only from this very host, over HTTPS, with Path=/ and no
// Domain, so a page on a sibling subdomain cannot plant one of its own sessions in the console
// (cookie tossing, signing the user in as someone else). Over plain HTTP (http://localhost), where a
// browser drops Secure cookies, it is `hallmark_session`, which requests over HTTPS never read.

/** The cookie's name over plain HTTP. */
export const sessionCookieName = 'hallmark_session';
/** The cookie's name over HTTPS. */
export const secureSessionCookieName = `__Host-${sessionCookieName}`;

const nameFor = (secure: boolean) => (secure ? secureSessionCookieName : sessionCookieName);

/**
 * The session token of a Cookie header, or undefined when it holds none: the `__Host-` cookie for
 * a request that came over HTTPS, the plain one otherwise. A header naming the cookie more than
 * once is read as the first (browsers send the most specific path first; the console sets it at
 * Path=/ only).
 */
export function sessionTokenOf(cookieHeader: string | undefined, secure: boolean): string | undefined {
  if (!cookieHeader) return undefined;
  const name = nameFor(secure);
  for (const pair of cookieHeader.split(';')) {
    const separator = pair.indexOf('=');
    if (separator < 0) continue;
    if (pair.slice(0, separator).trim() !== name) continue;
    const value = pair.slice(separator + 1).trim();
    return value === '' ? undefined : value;
  }
  return undefined;
}

/** Set-Cookie for a new session: a browser-session cookie (no Max-Age); the server ends it anyway. */
export function sessionCookie(token: string, secure: boolean): string {
  return `${nameFor(secure)}=${token}; HttpOnly; SameSite=Strict; Path=/${secure ? '; Secure' : ''}`;
}

/** Set-Cookie that removes the session cookie (sign-out, or a session that ended). */
export function clearedSessionCookie(secure: boolean): string {
  return `${nameFor(secure)}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0${secure ? '; Secure' : ''}`;
}
