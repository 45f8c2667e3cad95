/**
 * The request target as the gateway reads it: a path and a query, whatever form the client sent.
 *
 * HTTP/1.1 lets a client send an absolute URL as the target (`GET http://other.example/01/… HTTP/1.1`,
 * RFC 9112, 3.2.2), and a server must take it. Node and fastify route it by its path, but leave
 * `request.url` as it came, so the resolver wrote `http://id.brand.comhttp://other.example/01/…`
 * into its `Link` headers, redirects and linksets, and the idempotency fingerprint differed from the
 * same request in origin form. Given to fastify as `rewriteUrl`, {@link originFormOf} makes every
 * target a path before anything reads it; absolute links come from configuration only
 * (docs/SECURITY.md), never from the target's authority.
 */

// `http://host:port` (any scheme Node's parser lets through), up to the path.
const schemeAndAuthority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/** `/path?query` for any target: an absolute URL loses its scheme and authority; `*` stays. */
export function originFormOf(target: string): string {
  if (target.startsWith('/')) return target;
  const authority = schemeAndAuthority.exec(target);
  if (!authority) return target;
  const rest = target.slice(authority[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/**
 * A path with its percent-encoded characters read, as the router reads them (`/%61pi/v1/keys` is
 * `/api/v1/keys`), except those that would change its segments or its query (`%2F`, `%3F`, `%23`,
 * as `decodeURI` leaves them); a path whose encoding is not UTF-8 is kept as it came.
 */
export function decodedPathOf(path: string): string {
  if (!path.includes('%')) return path;
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}
