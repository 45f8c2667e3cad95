import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OwnedPostgres, startOwnPostgres } from '../../../../test/faults/servers.ts';
import { makeTestCertificates, type TestCertificates } from '../../../../test/support/test-ca.ts';
import { accountsCommand } from './accounts.ts';
import { migrateCommand } from './migrate.ts';

// The operator's commands on a PostgreSQL that takes TCP connections only over TLS (a cluster of
// this test's own, test/faults/servers.ts), with HALLMARK_TLS_CA_FILE as the services have it.

const folder = mkdtempSync(join(tmpdir(), 'hallmark-cli-tls-'));
let certificates: TestCertificates;
let cluster: OwnedPostgres;
let databaseUrl: string;

beforeAll(async () => {
  certificates = makeTestCertificates(folder);
  cluster = await startOwnPostgres({
    tls: { certFile: certificates.serverCertFile, keyFile: certificates.serverKeyFile, caFile: certificates.caFile },
  });
  const url = new URL(await cluster.createDatabase('hallmark_cli_tls'));
  url.search = '?sslmode=verify-full';
  databaseUrl = url.toString();
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(folder, { recursive: true, force: true });
}, 90_000);

async function outputOf(command: (out: (text: string) => void) => Promise<void>): Promise<string> {
  let text = '';
  try {
    await command((chunk) => {
      text += chunk;
    });
    return text;
  } catch (error) {
    return `failed: ${(error as Error).message}`;
  }
}

describe('hallmark migrate and the operator commands over TLS', () => {
  it('trust HALLMARK_TLS_CA_FILE for a sslmode=verify-full HALLMARK_DATABASE_URL, and refuse the server without it', async () => {
    const withCa = { HALLMARK_DATABASE_URL: databaseUrl, HALLMARK_TLS_CA_FILE: certificates.caFile };
    // Without the CA file only the system's authorities are trusted, and they do not know this CA.
    expect(await outputOf((out) => migrateCommand([], { HALLMARK_DATABASE_URL: databaseUrl }, out))).toBe(
      'failed: unable to verify the first certificate',
    );
    expect(await outputOf((out) => migrateCommand([], withCa, out))).toMatch(/^runtime: applied 1$/m);
    expect(await outputOf((out) => migrateCommand([], withCa, out))).toMatch(/^runtime: up to date$/m);
    expect(
      await outputOf((out) => accountsCommand(['create', '--name', 'Maison TLS', '--tier', 'starter'], withCa, out)),
    ).toMatch(/^account acc_[0-9a-f]+ \(Maison TLS, starter\)$/m);
  });
});
