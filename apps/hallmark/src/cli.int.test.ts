import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { findApiKeyByHash, hashApiKeySecret } from '@hallmark/accounts';
import { createPostgresDatabase, createTestDatabase, type TestDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../bin/hallmark.js', import.meta.url));

let database: TestDatabase;

async function hallmark(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
      env: { PATH: process.env.PATH ?? '', HALLMARK_DATABASE_URL: database.url },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

beforeAll(async () => {
  database = await createTestDatabase('cli');
});
afterAll(async () => {
  await database.drop();
});

describe('hallmark CLI against the configured database', () => {
  it('creates an account, issues, lists and revokes keys, printing each secret once', async () => {
    const account = await hallmark('accounts', 'create', '--name', 'Maison Test', '--tier', 'starter');
    expect(account.code).toBe(0);
    const accountId = /account (acc_[0-9a-f]+)/.exec(account.stdout)?.[1];
    const firstSecret = /(svc_live_[0-9a-f]{64})/.exec(account.stdout)?.[1];
    expect(accountId).toBeDefined();
    expect(firstSecret).toBeDefined();

    const created = await hallmark(
      'keys',
      'create',
      '--account',
      accountId!,
      '--name',
      'ci',
      '--scopes',
      'assets:read,keys:read',
      '--expires-in',
      '30d',
    );
    expect(created.code).toBe(0);
    const secret = /(svc_live_[0-9a-f]{64})/.exec(created.stdout)?.[1];
    const keyId = /API key (key_[0-9a-f]+)/.exec(created.stdout)?.[1];
    const db = createPostgresDatabase({ connectionString: database.url });
    try {
      expect(await findApiKeyByHash(db, hashApiKeySecret(secret!))).toMatchObject({
        id: keyId,
        scopes: ['assets:read', 'keys:read'],
      });
    } finally {
      await db.close();
    }

    const listed = await hallmark('keys', 'list', '--account', accountId!);
    expect(listed.stdout).toContain(keyId);
    expect(listed.stdout).not.toContain(secret);
    expect(listed.stdout).not.toContain(firstSecret);

    const revoked = await hallmark('keys', 'revoke', '--account', accountId!, '--id', keyId!);
    expect(revoked.code).toBe(0);
    expect((await hallmark('keys', 'list', '--account', accountId!)).stdout).toMatch(new RegExp(`${keyId}\\tlive\\trevoked`));
  });

  it('refuses bad command lines with a usage message and exit code 64', async () => {
    expect((await hallmark('accounts', 'create', '--name', 'X', '--tier', 'gold')).code).toBe(64);
    expect((await hallmark('keys', 'create', '--account', 'acc_x', '--name', 'n', '--scopes', 'assets:fly')).code).toBe(64);
    const unknown = await hallmark('frobnicate');
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toContain('Usage: hallmark');
  });

  it('refuses accounts:write for a tenant account', async () => {
    const account = await hallmark('accounts', 'create', '--name', 'Tenant', '--tier', 'free');
    const accountId = /account (acc_[0-9a-f]+)/.exec(account.stdout)?.[1];
    const refused = await hallmark('keys', 'create', '--account', accountId!, '--name', 'x', '--scopes', 'accounts:write');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('accounts:write');
  });
});
