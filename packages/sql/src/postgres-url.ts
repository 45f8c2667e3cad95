/** sslmode values for which node-postgres uses TLS (and, in pg 8, checks the certificate and host name). */
const tlsModes = new Set(['prefer', 'require', 'verify-ca', 'verify-full']);

/**
 * The connection string with `sslrootcert=<tlsCaFile>` added when it asks for TLS (sslmode
 * prefer, require, verify-ca or verify-full, or ssl=true) and names no `sslrootcert` of its own;
 * otherwise unchanged. So the URL decides whether TLS is used, and the CA file only whom to trust
 * (as for `rediss://`): HALLMARK_TLS_CA_FILE never turns TLS on or overrides the URL's own file.
 * node-postgres (pg-connection-string) reads the file at each new connection; a missing file fails
 * that connection. A string that is not a URL (a socket path) is returned as it is.
 */
export function withTrustedCaFile(connectionString: string, tlsCaFile: string | undefined): string {
  if (!tlsCaFile) return connectionString;
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    return connectionString;
  }
  const parameters = url.searchParams;
  const asksForTls =
    tlsModes.has(parameters.get('sslmode') ?? '') ||
    (!parameters.has('sslmode') && /^(true|1)$/.test(parameters.get('ssl') ?? ''));
  if (!asksForTls || parameters.has('sslrootcert')) return connectionString;
  // Appended to the query as written, so the rest of the URL is not re-encoded.
  url.search = `${url.search ? `${url.search}&` : '?'}sslrootcert=${encodeURIComponent(tlsCaFile)}`;
  return url.toString();
}
