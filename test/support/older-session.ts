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
