import { createPostgresDatabase } from '@hallmark/sql';

/**
 * A PostgreSQL session named `applicationName` held open on `databaseUrl` until the returned
 * function is called: a process of an older release as runtime's release-gates.ts sees one (held in
 * a transaction, since a pool closes a connection idle for 10 s).
 */
export async function holdOlderSession(databaseUrl: string, applicationName: string): Promise<() => Promise<void>> {
  const older = createPostgresDatabase({ connectionString: databaseUrl, applicationName });
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let connected!: () => void;
  const isConnected = new Promise<void>((resolve) => {
    connected = resolve;
  });
  const held = older.transaction(async (tx) => {
    await tx.query('SELECT 1');
    connected();
    await released;
  });
  await isConnected;
  return async () => {
    release();
    await held;
    await older.close();
  };
}

/** How often the release gates of a product made for these tests look (the default, 10 s, would have each test wait twice that long). */
const releaseGateSeconds = 1;

/** The setting of a product whose rolling updates acrossOlderSession plays: start it with these. */
export const quickReleaseGates = { HALLMARK_RELEASE_GATE_SECONDS: String(releaseGateSeconds) };

/** How long a release gate of such a product waits between its looks at the sessions, and a little. */
const gateLookMs = releaseGateSeconds * 1000 + 500;

/**
 * What `write` gives while a session named `applicationName` (or one of each name) is held open
 * (after the gate's next look), and once it has gone (after the look after that): a rolling update
 * from an older release as a gate of runtime's release-gates.ts meets it. The product must be
 * started with `quickReleaseGates`.
 */
export async function acrossOlderSession<T>(
  databaseUrl: string,
  applicationName: string | readonly string[],
  write: () => Promise<T>,
): Promise<{ during: T; after: T }> {
  const names = typeof applicationName === 'string' ? [applicationName] : applicationName;
  const releases = await Promise.all(names.map((name) => holdOlderSession(databaseUrl, name)));
  let during: T;
  try {
    await new Promise((resolve) => setTimeout(resolve, gateLookMs));
    during = await write();
  } finally {
    for (const release of releases) await release();
  }
  await new Promise((resolve) => setTimeout(resolve, gateLookMs));
  return { during, after: await write() };
}
