import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { hallmarkBin as bin, runHallmark } from '../support/hallmark-cli.ts';

// The operator CLI against what others chose (found by a review of the console and CLI, 2026-12-04).
// A key's name is the tenant's (POST /keys takes any 1-100 characters), and `hallmark keys list`
// printed it raw into a tab-separated line: escape sequences reached the operator's terminal and line
// breaks forged listing lines; names are now printed with those written as escapes (terminal-text.ts).
// And a `.hallmark/hallmark.lock` planted in a folder made the CLI send the operator key to the address
// it named; the key now goes only to a lock a server of this user wrote (data-dir-lock.ts, whyNotTrusted).

const run = promisify(execFile);

let t: TestProduct;
let accountId: string;
let activeKeyId: string;

const hallmark = (env: Record<string, string>, ...args: string[]) => runHallmark(t.dataDir, env, args);

// ESC ] 0 ; … BEL sets the terminal's title; ESC [ 2 J clears the screen; then a forged line: a key
// id and "revoked", as `keys list` prints a revoked key.
const hostileName = (forgedId: string) => `ci\u001b]0;owned\u0007\u001b[2J\n${forgedId}\tlive\trevoked\tx\tci`;

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_LOG_LEVEL: 'warn' });
  const operatorKey = t.product.generatedOperatorKey as string;
  const created = await call<{ account: { id: string }; apiKey: { secret: string; id: string } }>(
    t.url,
    'POST',
    '/api/v1/accounts',
    { key: operatorKey, body: { name: 'Terminal tenant', tier: 'enterprise' } },
  );
  expect(created.status).toBe(201);
  accountId = created.body.account.id;
  const tenantKey = created.body.apiKey.secret;
  // The tenant names a key of its own with terminal escapes, a tab and a line break: the API refuses
  // such a name now (400), so the name is the one stored before that rule (written in the table).
  const refused = await call(t.url, 'POST', '/api/v1/keys', {
    key: tenantKey,
    body: { name: hostileName(created.body.apiKey.id), scopes: ['assets:read'], environment: 'live' },
  });
  expect(refused.status, JSON.stringify(refused.body)).toBe(400);
  // As is a webhook description of the same kind (shown in the console's and the API's listings).
  const endpoint = await call(t.url, 'POST', '/api/v1/webhooks/endpoints', {
    key: tenantKey,
    body: { url: 'https://hooks.example.com/x', eventTypes: ['quota.threshold'], description: 'ops\u001b[2J\u202eevil' },
  });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(400);
  const key = await call<{ id: string }>(t.url, 'POST', '/api/v1/keys', {
    key: tenantKey,
    body: { name: 'ci', scopes: ['assets:read'], environment: 'live' },
  });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  activeKeyId = key.body.id;
  await t.product.db.query('UPDATE api_keys SET name = $1 WHERE id = $2', [hostileName(created.body.apiKey.id), activeKeyId]);
  // The operator works on the database (as with HALLMARK_DATABASE_URL in the distributed form).
  await t.stopKeepingData();
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

describe('hallmark keys list prints a tenant’s key names', () => {
  it('without terminal control sequences or line breaks a tenant put in them', async () => {
    const listed = await hallmark({}, 'keys', 'list', '--account', accountId);
    expect(listed.code, listed.stderr).toBe(0);
    // No escape, BEL or other C0 control but the tab and newline that separate fields and lines.
    expect([...listed.stdout].filter((character) => /\p{Cc}/u.test(character) && !'\t\n'.includes(character))).toEqual([]);
    // One line a key (the account's first key and the tenant's own), none forged by a name.
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line.split('\t')).toHaveLength(7);
    // The tenant's active key is listed as active on its own line, not hidden behind a forged "revoked" one.
    expect(lines.find((line) => line.startsWith(`${activeKeyId}\t`))?.split('\t')[2]).toBe('active');
  });
});

describe('hallmark in a folder someone else prepared', () => {
  it('sends no key to the address a planted .hallmark/hallmark.lock names', async () => {
    const { createServer } = await import('node:http');
    const { mkdtemp, mkdir, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    // The "server" the planted lock points at: it records the keys it is sent.
    const received: string[] = [];
    const evil = createServer((request, response) => {
      const key = request.headers['x-api-key'];
      if (typeof key === 'string') received.push(key);
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { code: 'INVALID_API_KEY', message: 'no' } }));
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    const evilUrl = `http://127.0.0.1:${(evil.address() as { port: number }).port}`;
    // A checkout or shared folder with a .hallmark/hallmark.lock in it: pid 1 always "lives" (EPERM).
    const folder = await mkdtemp(join(tmpdir(), 'review-planted-'));
    try {
      await mkdir(join(folder, '.hallmark'));
      await writeFile(
        join(folder, '.hallmark', 'hallmark.lock'),
        JSON.stringify({ pid: 1, holder: 'server', url: evilUrl, startedAt: new Date().toISOString() }),
      );
      const secret = 'hm_live_operator_secret_that_must_stay_home';
      const outcome = await run(process.execPath, [bin, 'keys', 'list', '--account', 'acc_1'], {
        cwd: folder,
        env: { PATH: process.env.PATH ?? '', HALLMARK_OPERATOR_KEY: secret },
      }).catch((error: unknown) => error as { stderr: string });
      expect(outcome.stderr).toBeDefined();
      expect(received).toEqual([]);
    } finally {
      await new Promise((resolve) => evil.close(resolve));
      await rm(folder, { recursive: true, force: true });
    }
  });
});
