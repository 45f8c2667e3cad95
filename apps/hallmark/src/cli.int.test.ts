import { execFile, spawn } from 'node:child_process';
import { access, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { findApiKeyByHash, hashApiKeySecret } from '@hallmark/accounts';
import { createPostgresDatabase, createTestDatabase, type TestDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test/support/distributed-product.ts';
import { call, startTestProduct, type TestProduct } from '../../../test/support/embedded.ts';
import { DataDirInUseError } from './data-dir-lock.ts';
import { startEmbedded } from './embedded.ts';

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

    // A key restricted to some GTINs (a GTIN-13 kept as its GTIN-14); a wrong check digit is refused.
    const restricted = await hallmark(
      'keys',
      'create',
      '--account',
      accountId!,
      '--name',
      'line',
      '--scopes',
      'assets:create',
      '--gtins',
      '9506000134352',
    );
    expect(restricted.code, restricted.stderr).toBe(0);
    expect(restricted.stdout).toContain('restricted to GTINs 09506000134352');
    const typo = await hallmark(
      'keys',
      'create',
      '--account',
      accountId!,
      '--name',
      'typo',
      '--scopes',
      'assets:create',
      '--gtins',
      '09506000134353',
    );
    expect(typo.code).not.toBe(0);
    expect(typo.stderr).toContain('restrictions.gtins.0 the check digit is 3');

    const listed = await hallmark('keys', 'list', '--account', accountId!);
    expect(listed.stdout).toMatch(/\tassets:create\t09506000134352\n/);
    expect(listed.stdout).toMatch(new RegExp(`${keyId}\\t.*\\tassets:read,keys:read\\t-\\n`));
    expect(listed.stdout).toContain(keyId);
    expect(listed.stdout).not.toContain(secret);
    expect(listed.stdout).not.toContain(firstSecret);

    const revoked = await hallmark('keys', 'revoke', '--account', accountId!, '--id', keyId!);
    expect(revoked.code).toBe(0);
    expect((await hallmark('keys', 'list', '--account', accountId!)).stdout).toMatch(new RegExp(`${keyId}\\tlive\\trevoked`));

    // What the CLI changed is in the account's stream, as if done through the API (#17).
    const events = createPostgresDatabase({ connectionString: database.url });
    try {
      const rows = await events.query<{ event_type: string; data: { keyId?: string; createdBy?: string | null } }>(
        'SELECT event_type, data FROM event_log WHERE stream_id = $1 ORDER BY stream_version',
        [`account-${accountId}-live`],
      );
      expect(rows.map((row) => [row.event_type, row.data.keyId ?? null])).toEqual([
        ['account.created', null],
        ['key.issued', expect.stringMatching(/^key_/)],
        ['key.issued', keyId],
        ['key.issued', expect.stringMatching(/^key_/)],
        ['key.revoked', keyId],
      ]);
      expect(rows[2]?.data.createdBy).toBeNull();
      expect(rows[3]?.data).toMatchObject({ restrictions: { gtins: ['09506000134352'] } });
      expect(JSON.stringify(rows)).not.toContain(secret!.slice(9, 40));
    } finally {
      await events.close();
    }
  });

  it('refuses bad command lines with one line, a hint and exit code 2; no usage dump, no stack', async () => {
    expect((await hallmark('accounts', 'create', '--name', 'X', '--tier', 'gold')).code).toBe(2);
    expect((await hallmark('keys', 'create', '--account', 'acc_x', '--name', 'n', '--scopes', 'assets:fly')).code).toBe(2);
    const unknown = await hallmark('frobnicate');
    expect(unknown).toEqual({
      code: 2,
      stdout: '',
      stderr: 'hallmark: unknown command "frobnicate"\nRun "hallmark --help" for usage.\n',
    });
    expect((await hallmark('kyes', 'list')).stderr).toContain('unknown command "kyes" (did you mean "keys"?)');
    const option = await hallmark('keys', 'list', '--account', 'acc_x', '--colour', 'red');
    expect(option).toEqual({
      code: 2,
      stdout: '',
      stderr: 'hallmark: unknown option --colour\nRun "hallmark keys --help" for its usage.\n',
    });
    const noAction = await hallmark('keys', '--account', 'acc_x');
    expect(noAction.stderr).toBe(
      'hallmark: keys needs an action: create, list, revoke\nRun "hallmark keys --help" for its usage.\n',
    );
    const missing = await hallmark('accounts', 'create', '--name');
    expect([missing.code, missing.stderr.split('\n')[0]]).toEqual([2, 'hallmark: --name needs a value']);
  });

  it('answers --version, and --help on every command with its usage and the exit codes', async () => {
    const version = await hallmark('--version');
    const manifest = JSON.parse(await readFile(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8'));
    expect(version).toEqual({ code: 0, stdout: `hallmark ${manifest.version}\n`, stderr: '' });
    const general = await hallmark('--help');
    expect(general.code).toBe(0);
    expect(general.stdout).toMatch(/Exit codes:\n {2}0 .*\n {2}1 .*\n(?: {6}.*\n)? {2}2 .*\n {2}70 .*\n {2}78 /);
    // Every command, --help or -h (each process starts tsx: two at a time, one flag each, to stay quick).
    const commands = ['start', 'accounts', 'keys', 'gtins', 'codes', 'compliance', 'verify', 'audit', 'projections', 'migrate'];
    for (let index = 0; index < commands.length; index += 2) {
      await Promise.all(
        commands.slice(index, index + 2).map(async (command, offset) => {
          const flag = offset === 0 ? '--help' : '-h';
          const help = await hallmark(command, flag);
          expect(help.code, `${command} ${flag}`).toBe(0);
          expect(help.stdout, `${command} ${flag}`).toMatch(new RegExp(`^Usage:\n {2}hallmark ${command}`));
          expect(help.stdout).toContain('Exit codes:');
        }),
      );
    }
    // Help wins over whatever else is on the line, even an incomplete one.
    expect((await hallmark('keys', 'create', '--help')).stdout).toContain('hallmark keys create');
    expect((await hallmark('help', 'gtins')).stdout).toContain('hallmark gtins grant');
  }, 60_000);

  it('lists accounts and keys, as text or as one JSON object per line', async () => {
    const account = await hallmark('accounts', 'create', '--name', 'Listed', '--tier', 'enterprise', '--env', 'test');
    const accountId = /account (acc_[0-9a-f]+)/.exec(account.stdout)?.[1] as string;
    const text = await hallmark('accounts', 'list');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^${accountId}\tenterprise\t\\S+\tListed$`, 'm'));
    const json = await hallmark('accounts', 'list', '--json');
    const accounts = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    // Newest first: the account just made leads.
    expect(accounts[0]).toEqual({
      id: accountId,
      name: 'Listed',
      tier: 'enterprise',
      isOperator: false,
      createdAt: expect.any(String),
    });
    expect(accounts.length).toBeGreaterThan(1);
    const keys = await hallmark('keys', 'list', '--account', accountId, '--json');
    const [key] = keys.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(key).toMatchObject({ type: 'api', environment: 'test', status: 'active', scopes: ['*'] });
    expect(key.secret).toBeUndefined();
  });

  it('refuses accounts:write for a tenant account', async () => {
    const account = await hallmark('accounts', 'create', '--name', 'Tenant', '--tier', 'free');
    const accountId = /account (acc_[0-9a-f]+)/.exec(account.stdout)?.[1];
    const refused = await hallmark('keys', 'create', '--account', accountId!, '--name', 'x', '--scopes', 'accounts:write');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('accounts:write');
  });
});

/** The CLI on an embedded data folder (no HALLMARK_DATABASE_URL), with `env` added. */
async function hallmarkOn(
  dataDir: string,
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
      env: { PATH: process.env.PATH ?? '', HALLMARK_DATA_DIR: dataDir, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The pid of a process that has exited: what a crashed server leaves in its lock file. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid as number;
}

describe('hallmark CLI while the embedded server runs on the data folder', () => {
  let t: TestProduct;
  beforeAll(async () => {
    t = await startTestProduct();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('goes through the server’s API: a key it creates works at once, a key it revokes stops at once', async () => {
    const lock = JSON.parse(await readFile(join(t.dataDir, 'hallmark.lock'), 'utf8'));
    expect(lock).toMatchObject({ pid: process.pid, holder: 'server', url: t.url });

    // The operator key from <data dir>/operator-key.
    const account = await hallmarkOn(t.dataDir, {}, 'accounts', 'create', '--name', 'Running tenant', '--tier', 'starter');
    expect(account.code, account.stderr).toBe(0);
    const accountId = /account (acc_[0-9a-f]+)/.exec(account.stdout)?.[1] as string;
    const tenantKey = /(svc_live_[0-9a-f]{64})/.exec(account.stdout)?.[1] as string;
    expect((await call(t.url, 'GET', '/api/v1/keys', { key: tenantKey })).status).toBe(200);

    // The tenant's keys, with the tenant's key.
    const created = await hallmarkOn(
      t.dataDir,
      {},
      'keys',
      'create',
      '--account',
      accountId,
      '--name',
      'ci',
      '--scopes',
      'keys:read',
      '--key',
      tenantKey,
    );
    expect(created.code, created.stderr).toBe(0);
    const secret = /(svc_live_[0-9a-f]{64})/.exec(created.stdout)?.[1] as string;
    const keyId = /API key (key_[0-9a-f]+)/.exec(created.stdout)?.[1] as string;
    const listedByApi = await call<{ accountId: string; keys: { id: string }[] }>(t.url, 'GET', '/api/v1/keys', { key: secret });
    expect(listedByApi.status).toBe(200);
    expect(listedByApi.body.accountId).toBe(accountId);
    expect(listedByApi.body.keys.map((key) => key.id)).toContain(keyId);

    const listed = await hallmarkOn(t.dataDir, {}, 'keys', 'list', '--account', accountId, '--key', tenantKey);
    expect(listed.stdout).toMatch(new RegExp(`${keyId}\\tlive\\tactive\\t`));
    expect(listed.stdout).not.toContain(secret);
    const revoked = await hallmarkOn(t.dataDir, {}, 'keys', 'revoke', '--account', accountId, '--id', keyId, '--key', tenantKey);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await call(t.url, 'GET', '/api/v1/keys', { key: secret })).status).toBe(401);

    // The operator key manages its own account's keys only; another account's, not under its name.
    const refused = await hallmarkOn(
      t.dataDir,
      {},
      'keys',
      'create',
      '--account',
      accountId,
      '--name',
      'x',
      '--scopes',
      'keys:read',
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('own account');

    // GTIN grants go through POST /accounts/{id}/gtins.
    const granted = await hallmarkOn(t.dataDir, {}, 'gtins', 'grant', '--account', accountId, '--gtin', '09506000134376');
    expect(granted.code, granted.stderr).toBe(0);
    const grants = await call<{ claims: { value: string }[] }>(t.url, 'GET', `/api/v1/accounts/${accountId}/gtins`, {
      key: t.product.generatedOperatorKey as string,
    });
    expect(grants.body.claims.map((claim) => claim.value)).toEqual(['09506000134376']);
    const gtinList = await hallmarkOn(t.dataDir, {}, 'gtins', 'list', '--account', accountId);
    // Tab-separated, as every list (docs/CLI.md; the doc audit of 2026-12-07 found it padded with spaces).
    expect(gtinList.stdout.trim().split('\t').slice(1, 5)).toEqual(['gtin', '09506000134376', 'live', 'active']);
  });

  it('lists accounts through the server’s GET /accounts', async () => {
    const created = await call<{ account: { id: string } }>(t.url, 'POST', '/api/v1/accounts', {
      key: t.product.generatedOperatorKey as string,
      body: { name: 'Listed over the API', tier: 'free' },
    });
    expect(created.status).toBe(201);
    const listed = await hallmarkOn(t.dataDir, {}, 'accounts', 'list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const accounts = listed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(accounts[0]).toMatchObject({ id: created.body.account.id, name: 'Listed over the API', isOperator: false });
    expect(accounts.filter((account) => account.isOperator)).toHaveLength(1);
  });

  it('refuses what cannot go through the API, and says how to proceed without the operator key', async () => {
    for (const command of [
      ['projections', 'rebuild'],
      ['gtins', 'conflicts'],
    ]) {
      const refused = await hallmarkOn(t.dataDir, {}, ...command);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('a Hallmark server');
      expect(refused.stderr).toContain('stop the server first');
    }
    const keyFile = join(t.dataDir, 'operator-key');
    await rename(keyFile, `${keyFile}.away`);
    try {
      const noKey = await hallmarkOn(t.dataDir, {}, 'accounts', 'create', '--name', 'No key', '--tier', 'free');
      expect(noKey.code).toBe(1);
      expect(noKey.stderr).toContain('is running');
      expect(noKey.stderr).toContain('HALLMARK_OPERATOR_KEY');
      const withEnv = await hallmarkOn(
        t.dataDir,
        { HALLMARK_OPERATOR_KEY: t.product.generatedOperatorKey as string },
        'accounts',
        'create',
        '--name',
        'Env key',
        '--tier',
        'free',
      );
      expect(withEnv.code, withEnv.stderr).toBe(0);
    } finally {
      await rename(`${keyFile}.away`, keyFile);
    }
  });

  it('refuses a second server on the same data folder', async () => {
    await expect(startEmbedded({ PORT: '0', HALLMARK_DATA_DIR: t.dataDir, HALLMARK_LOG_LEVEL: 'silent' })).rejects.toThrow(
      DataDirInUseError,
    );
  });
});

describe('the data folder lock', () => {
  it('a stale lock file (its process dead) is taken over, by the CLI and by the server', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'hallmark-lock-'));
    try {
      const lockFile = join(dataDir, 'hallmark.lock');
      const stale = async (holder: string) =>
        writeFile(
          lockFile,
          JSON.stringify({ pid: await deadPid(), holder, url: 'http://localhost:1', startedAt: new Date().toISOString() }),
        );
      await stale('server');
      const account = await hallmarkOn(dataDir, {}, 'accounts', 'create', '--name', 'After a crash', '--tier', 'free');
      expect(account.code, account.stderr).toBe(0);
      await expect(access(lockFile)).rejects.toThrow(); // released when the command ended

      await stale('server');
      const product = await startEmbedded({ PORT: '0', HALLMARK_DATA_DIR: dataDir, HALLMARK_LOG_LEVEL: 'silent' });
      try {
        expect(JSON.parse(await readFile(lockFile, 'utf8'))).toMatchObject({
          pid: process.pid,
          holder: 'server',
          url: product.url,
        });
      } finally {
        await product.stop();
      }
      await expect(access(lockFile)).rejects.toThrow(); // removed on stop
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the operator key on a first start', () => {
  it('is on disk before /health answers, so a script that waits for /health and then reads it finds it', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'hallmark-first-start-'));
    const port = await freePort();
    const keyFile = join(dataDir, 'operator-key');
    // Asks /health every few milliseconds from before the start until after it, noting each 200
    // that came while the key file was not there yet.
    const seen = { healthy: 0, healthyWithoutKey: 0 };
    let polling = true;
    const poller = (async () => {
      while (polling) {
        try {
          const response = await fetch(`http://127.0.0.1:${port}/health`);
          await response.arrayBuffer();
          if (response.ok) {
            seen.healthy++;
            await access(keyFile).catch(() => {
              seen.healthyWithoutKey++;
            });
          }
        } catch {
          // not listening yet
        }
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    try {
      const product = await startEmbedded({ PORT: String(port), HALLMARK_DATA_DIR: dataDir, HALLMARK_LOG_LEVEL: 'silent' });
      try {
        expect(product.operatorKeyFile).toBe(keyFile);
        while (seen.healthy < 3) await new Promise((resolve) => setTimeout(resolve, 5));
      } finally {
        polling = false;
        await poller;
        await product.stop();
      }
      expect(seen.healthyWithoutKey).toBe(0);
    } finally {
      polling = false;
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
