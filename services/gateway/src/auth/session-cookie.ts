// The console's session cookie (docs/SECURITY.md, "Console sessions"): read from the Cookie header,
// and written HttpOnly, SameSite=Strict, Path=/. Over HTTPS it is `__Host-hallmark_session`, Secure:
// a browser takes a `__Host-` cookie only from this very host, over HTTPS, with Path=/ and no
// Domain, so a page on a sibling subdomain cannot plant one of its own sessions in the console
// (cookie tossing, signing the user in as someone else). Over plain HTTP (http://localhost), where a
// browser drops Secure cookies, it is `hallmark_session`, which requests over HTTPS never read;
// there another page of the host can set one at a narrower path, so a request that carries two is
// refused, and the answer removes them (severalSessionCookies).

/** The cookie's name over plain HTTP. */
export const sessionCookieName = 'hallmark_session';
/** The cookie's name over HTTPS. */
export const secureSessionCookieName = `__Host-${sessionCookieName}`;

const nameFor = (secure: boolean) => (secure ? secureSessionCookieName : sessionCookieName);

/**
 * Every value of the session cookie in a Cookie header (the `__Host-` cookie for a request that came
 * over HTTPS, the plain one otherwise), in the order sent; empty values left out.
 */
export function sessionTokensOf(cookieHeader: string | undefined, secure: boolean): string[] {
  if (!cookieHeader) return [];
  const name = nameFor(secure);
  const tokens: string[] = [];
  for (const pair of cookieHeader.split(';')) {
    const separator = pair.indexOf('=');
    if (separator < 0 || pair.slice(0, separator).trim() !== name) continue;
    const value = pair.slice(separator + 1).trim();
    if (value !== '') tokens.push(value);
  }
  return tokens;
}

/**
 * What a request that carries the session cookie more than once gets instead of a token. The console
 * sets one, at Path=/; a second came from another page of the same host (another port: cookies are
 * not kept apart by port) or a sibling domain, set at a narrower path, which a browser sends first.
 * Read as the first, it signed the console into the other page's session (cookie tossing over plain
 * HTTP, where no `__Host-` prefix binds the cookie to this host): neither is used.
 */
export const severalSessionCookies = Symbol('several session cookies');

/** The refusal's words for severalSessionCookies (401 MISSING_API_KEY, "No console session: …"). */
export const severalSessionCookiesWhy =
  'the request carries the session cookie twice, one of them set by another page of this host; both are removed';

/** The session token of a Cookie header: undefined when it holds none, severalSessionCookies when more than one. */
export function sessionTokenOf(
  cookieHeader: string | undefined,
  secure: boolean,
): string | undefined | typeof severalSessionCookies {
  const tokens = sessionTokensOf(cookieHeader, secure);
  return tokens.length > 1 ? severalSessionCookies : tokens[0];
}

/** Set-Cookie for a new session: a browser-session cookie (no Max-Age); the server ends it anyway. */
export function sessionCookie(token: string, secure: boolean): string {
  return `${nameFor(secure)}=${token}; HttpOnly; SameSite=Strict; Path=/${secure ? '; Secure' : ''}`;
}

/** Set-Cookie that removes the session cookie (sign-out, or a session that ended). */
export function clearedSessionCookie(secure: boolean): string {
  return clearedAt('/', secure);
}

/** A path segment as a cookie's Path may carry it: unreserved characters and percent-escapes. */
const cookiePathSegment = /^[A-Za-z0-9._~%-]+$/;

const clearedAt = (path: string, secure: boolean) =>
  `${nameFor(secure)}=; HttpOnly; SameSite=Strict; Path=${path}; Max-Age=0${secure ? '; Secure' : ''}`;

/**
 * Set-Cookie lines that remove the session cookie at Path=/ and at every other path a cookie sent
 * with this request can have been set at: each leading part of the request's path (a cookie is sent
 * only under its path). `keepRoot` leaves Path=/ out, for an answer that sets a new session there.
 * A cookie set with a Domain attribute is not removed (its domain is not sent); it is still refused.
 */
export function clearedSessionCookies(secure: boolean, requestPath: string, { keepRoot = false } = {}): string[] {
  const paths = keepRoot ? [] : ['/'];
  if (!secure) {
    // `__Host-` cookies exist at Path=/ only.
    const segments = (requestPath.split('?')[0] ?? '').split('/').filter((segment) => segment !== '');
    for (let end = 1; end <= Math.min(segments.length, 8); end++) {
      // Only what a Path attribute can hold as it is: a `;` or `,` of the request's path would add
      // attributes of the caller's choosing to the line (`/x;Domain=…`), so the prefixes stop there.
      if (!cookiePathSegment.test(segments[end - 1] as string)) break;
      paths.push(`/${segments.slice(0, end).join('/')}`);
    }
  }
  return paths.map((path) => clearedAt(path, secure));
}
