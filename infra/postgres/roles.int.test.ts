import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { deleteNamespaceStreams } from '@hallmark/bus';
import {
  createPostgresDatabase,
  createTestDatabase,
  loadMigrations,
  runMigrations,
  type SqlDatabase,
  type TestDatabase,
  testServerUrl,
} from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../test/support/distributed-product.ts';
import { type ServiceProcess, startServiceProcess } from '../../test/support/service-process.ts';
import { waitFor } from '../../test/support/wait.ts';

// infra/postgres/roles.sql applied to a database of its own, with roles of a unique prefix (roles
// belong to the whole server; dropped after): each service's role is refused the others' tables,
// and the real services start and work on their own roles.

const root = fileURLToPath(new URL('../..', import.meta.url));
/** The migrations the distributed form runs, by module name (as the code loads them) and folder. */
const modules: Record<string, string> = {
  runtime: 'packages/runtime/migrations',
  'event-store': 'packages/event-store/migrations',
  accounts: 'packages/accounts/migrations',
  'code-service': 'services/code-service/migrations',
  'verify-service': 'services/verify-service/migrations',
  'auction-service': 'services/auction-service/migrations',
  'compliance-service': 'services/compliance-service/migrations',
};
/** Migrations only the embedded form runs (its PGlite, never PostgreSQL with these roles). */
const embeddedOnly = ['packages/cache/migrations'];
const prefix = `r${randomBytes(4).toString('hex')}`;
const role = (service: string) => `${prefix}_${service.replaceAll('-', '_')}`;
const services = ['gateway', 'code-service', 'verify-service', 'auction-service', 'compliance-service'];

let database: TestDatabase;
let rolesFolder: string | undefined;

async function on<T>(connectionString: string, work: (db: SqlDatabase) => Promise<T>): Promise<T> {
  const db = createPostgresDatabase({ connectionString, maxConnections: 1 });
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

function urlOf(service: string): string {
  const url = new URL(database.url);
  url.username = role(service);
  return url.toString();
}

/** The SQLSTATE a statement fails with as that service's role, or 'ok'. */
const outcome = (service: string, sql: string) =>
  on(urlOf(service), (db) =>
    db.query(sql).then(
      () => 'ok',
      (error: { code?: string; cause?: { code?: string } }) => error.code ?? error.cause?.code ?? String(error),
    ),
  );

beforeAll(async () => {
  database = await createTestDatabase('roles');
  const sql = readFileSync(join(root, 'infra/postgres/roles.sql'), 'utf8').replaceAll('hallmark_', `${prefix}_`);
  rolesFolder = mkdtempSync(join(tmpdir(), 'hallmark-roles-'));
  const rolesFile = join(rolesFolder, 'roles.sql');
  writeFileSync(rolesFile, sql);
  // The owner migrates with `hallmark migrate --roles`, as the Kubernetes Job does before services on roles start.
  const migrate = (...args: string[]) =>
    promisify(execFile)(process.execPath, ['apps/hallmark/bin/hallmark.js', 'migrate', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HALLMARK_DATABASE_URL: database.url },
    });
  expect((await migrate()).stdout).toMatch(/^code-service: applied 1, 2, 3/m);
  const first = (await migrate('--roles', rolesFile)).stdout.trim().split('\n');
  expect(first).toEqual([...Object.keys(modules).map((module) => `${module}: up to date`), `roles: applied ${rolesFile}`]);
  // Applied again (after a release), it changes nothing and fails nowhere.
  expect((await migrate('--roles', rolesFile)).stdout).toContain(`roles: applied ${rolesFile}`);
}, 60_000);

afterAll(async () => {
  if (rolesFolder) rmSync(rolesFolder, { recursive: true, force: true });
  await database?.drop();
  await on(testServerUrl, async (admin) => {
    for (const service of services) await admin.query(`DROP ROLE IF EXISTS "${role(service)}"`);
  });
});

describe('infra/postgres/roles.sql', () => {
  it('covers every module with migrations, and grants every table of them to some service', async () => {
    const folders = ['packages', 'services'].flatMap((group) =>
      readdirSync(join(root, group))
        .filter((name) => readdirSync(join(root, group, name)).includes('migrations'))
        .map((name) => `${group}/${name}/migrations`),
    );
    expect(folders.sort()).toEqual([...Object.values(modules), ...embeddedOnly].sort());
    const ungranted = await on(database.url, async (db) => {
      const rows = await db.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables t
          WHERE table_schema = 'public'
            AND NOT EXISTS (SELECT FROM unnest($1::text[]) AS r(name) WHERE has_table_privilege(r.name, 'public.' || t.table_name, 'SELECT'))`,
        [services.map(role)],
      );
      return rows.map((row) => row.table_name);
    });
    expect(ungranted).toEqual([]);
  });

  it("refuses each service another's tables, and every role the DDL", async () => {
    const cases: Array<[string, string, string]> = [
      ['code-service', 'SELECT count(*) FROM codes', 'ok'],
      ['code-service', 'SELECT count(*) FROM events', 'ok'],
      ['code-service', 'SELECT count(*) FROM auction_objects', '42501'],
      ['code-service', 'SELECT count(*) FROM api_keys', '42501'],
      ['code-service', 'SELECT count(*) FROM scans', '42501'],
      ['code-service', 'DELETE FROM events', '42501'],
      // Packed events (event store migration 0003) are as final as rows.
      ['code-service', 'UPDATE event_packs SET events = events', '42501'],
      ['code-service', 'DELETE FROM packed_streams', '42501'],
      ['verify-service', 'SELECT count(*) FROM event_log', 'ok'],
      ['code-service', 'CREATE TABLE intruder (x int)', '42501'],
      ['code-service', 'SELECT count(*) FROM installation', 'ok'],
      ['gateway', 'UPDATE installation SET id = gen_random_uuid()', '42501'],
      ['verify-service', 'SELECT count(*) FROM code_reports', 'ok'],
      ['verify-service', `INSERT INTO codes (asset_id) VALUES ('x')`, '42501'],
      ['verify-service', `UPDATE accounts SET name = 'x'`, '42501'],
      ['verify-service', `UPDATE verification_keys SET status = 'revoked'`, '42501'],
      ['verify-service', 'SELECT count(*) FROM merkle_nodes', '42501'],
      ['gateway', 'SELECT count(*) FROM api_keys', 'ok'],
      // It appends the accounts' and keys' events, and may never rewrite one.
      ['gateway', 'SELECT count(*) FROM events', 'ok'],
      ['gateway', 'DELETE FROM events', '42501'],
      ['gateway', 'UPDATE events SET data = data', '42501'],
      ['gateway', 'SELECT count(*) FROM codes', '42501'],
      ['gateway', 'SELECT count(*) FROM compliance_configs', '42501'],
      ['auction-service', 'SELECT count(*) FROM auction_objects', 'ok'],
      ['auction-service', 'SELECT count(*) FROM codes', '42501'],
      ['auction-service', 'SELECT count(*) FROM api_keys', '42501'],
      ['compliance-service', 'TRUNCATE merkle_nodes, provenance_events, provenance_assets', 'ok'],
      ['compliance-service', 'SELECT count(*) FROM auction_transfers', '42501'],
      ['compliance-service', 'DROP TABLE events', '42501'],
    ];
    const results = [];
    for (const [service, sql] of cases) results.push([service, sql, await outcome(service, sql)]);
    expect(results).toEqual(cases);
  });

  it('lets a service role start when its migrations are applied, and says what to do when one is not', async () => {
    await on(urlOf('code-service'), async (db) => {
      await expect(
        runMigrations(db, await loadMigrations('code-service', join(root, modules['code-service'] as string))),
      ).resolves.toEqual([]);
      const pending = {
        module: `${prefix}-new-module`,
        migrations: [{ version: 1, name: 'more', sql: 'CREATE TABLE more (x int)' }],
      };
      await expect(runMigrations(db, pending)).rejects.toThrow(/owner/);
    });
  });

  describe('the services on their own roles', () => {
    const natsUrl = process.env.HALLMARK_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
    const namespace = `roles_${randomUUID().slice(0, 8)}`;
    const operatorKey = `svc_live_${randomBytes(32).toString('hex')}`;
    const blobDir = mkdtempSync(join(tmpdir(), 'hallmark-roles-blobs-'));
    const processes: ServiceProcess[] = [];
    let url: string;

    beforeAll(async () => {
      const port = await freePort();
      const env = {
        HALLMARK_NATS_URL: natsUrl,
        HALLMARK_REDIS_URL: process.env.HALLMARK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
        HALLMARK_NAMESPACE: namespace,
        HALLMARK_LOG_LEVEL: 'warn',
        HALLMARK_MASTER_KEY: randomBytes(32).toString('hex'),
        HALLMARK_BUS_SECRET: randomBytes(32).toString('hex'),
        HALLMARK_BOOTSTRAP_KEY: operatorKey,
        HALLMARK_BLOB_DIR: blobDir,
      };
      for (const service of services) {
        const extra: Record<string, string> = service === 'gateway' ? { PORT: String(port), HALLMARK_HOST: '127.0.0.1' } : {};
        processes.push(startServiceProcess(service, { ...env, ...extra, HALLMARK_DATABASE_URL: urlOf(service) }));
      }
      url = `http://127.0.0.1:${port}`;
      try {
        for (const service of services.slice(1)) {
          await waitFor(
            `${service} to answer`,
            async () => {
              const dead = processes.find((started) => started.child.exitCode !== null);
              if (dead) throw new Error(`${dead.name} exited: ${dead.stderr.join('')}${JSON.stringify(dead.lines.slice(-3))}`);
              const response = await fetch(`${url}/api/v1/system/ping/${service}`, {
                method: 'POST',
                headers: { 'x-api-key': operatorKey },
              });
              return response.status === 200 ? true : undefined;
            },
            { timeoutMs: 60_000 },
          );
        }
      } catch (error) {
        for (const started of processes)
          console.error(`--- ${started.name}\n${started.stderr.join('')}${JSON.stringify(started.lines.slice(-5))}`);
        throw error;
      }
    }, 90_000);

    afterAll(async () => {
      await Promise.all(processes.map((started) => started.stop('SIGTERM')));
      await deleteNamespaceStreams(natsUrl, namespace);
      rmSync(blobDir, { recursive: true, force: true });
    });

    it('signs, verifies and proves a code: the gateway, code-, verify- and compliance-service each on its own role', async () => {
      const headers = { 'x-api-key': operatorKey, 'content-type': 'application/json' };
      // The operator signs a GTIN nobody owns.
      const generated = await fetch(`${url}/api/v1/code/generate`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ gtin: '09506000134369', serialNumber: 'ROLES-1', metadata: { name: 'Roles' } }),
      });
      const code = (await generated.json()) as { data?: { url: string; assetId: string }; url?: string; assetId?: string };
      expect(generated.status, JSON.stringify(code)).toBe(201);
      const link = code.data?.url ?? code.url;
      const verified = await fetch(`${url}/api/v1/code/verify`, { method: 'POST', headers, body: JSON.stringify({ url: link }) });
      const verdict = (await verified.json()) as { data?: { verdict?: string }; verdict?: string };
      expect(verified.status, JSON.stringify(verdict)).toBe(200);
      expect(verdict.data?.verdict ?? verdict.verdict).toBe('AUTHENTIC');
      const assetId = code.data?.assetId ?? code.assetId;
      const chain = await waitFor(
        'the compliance projection',
        async () => {
          const response = await fetch(`${url}/api/v1/compliance/${assetId}/verify`, { headers: { 'x-api-key': operatorKey } });
          return response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined;
        },
        { timeoutMs: 20_000 },
      );
      expect(JSON.stringify(chain)).toContain('"isValid":true');
    });
  });
});
