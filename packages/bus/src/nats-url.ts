/** What `connect` needs from a HALLMARK_NATS_URL. */
export interface NatsConnectionSettings {
  /** `host:port`, without the scheme or credentials: safe to show in messages. */
  servers: string;
  user?: string;
  pass?: string;
  token?: string;
  /** Set for `tls://`: the client then refuses a server that does not offer TLS. */
  tls?: { caFile?: string };
}

/**
 * Reads credentials and TLS from a NATS URL. The NATS client takes only host and port from its
 * `servers` and would silently drop `user:password@`, so they are passed as options instead:
 * `nats://user:password@host:4222` (user and password, percent-encoded), `nats://token@host:4222`
 * (a token), `tls://…` (TLS required, the server's certificate checked against `tlsCaFile` when
 * given, else the system's authorities).
 * Throws a TypeError when the text is not a URL.
 */
export function natsConnectionSettings(url: string, tlsCaFile?: string): NatsConnectionSettings {
  const parsed = new URL(url);
  const servers = `${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}`;
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  return {
    servers,
    ...(user && parsed.password ? { user, pass } : user ? { token: user } : {}),
    ...(parsed.protocol === 'tls:' ? { tls: tlsCaFile ? { caFile: tlsCaFile } : {} } : {}),
  };
}
