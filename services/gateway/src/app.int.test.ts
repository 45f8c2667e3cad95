import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrateAccounts } from '@hallmark/accounts';
import { createFilesystemBlobStore } from '@hallmark/blob-store';
import { createInProcessBus } from '@hallmark/bus';
import { createMemoryCache } from '@hallmark/cache';
import { routerPathOf, routes } from '@hallmark/contracts';
import { createLogger, readConfig } from '@hallmark/runtime';
import { createPgliteDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGatewayApp } from './app.ts';
import { GatewayConfig } from './config.ts';

// The gateway reads the cache epochs as it starts; routes read nothing until a request, and these tests send none.
let db: SqlDatabase;
beforeAll(async () => {
  db = await createPgliteDatabase();
  await migrateAccounts(db);
});
afterAll(() => db?.close());

const deps = () => ({
  config: readConfig(GatewayConfig, {}),
  bus: createInProcessBus(),
  db,
  eventStore: undefined as never,
  cache: createMemoryCache(),
  blobs: createFilesystemBlobStore(join(tmpdir(), 'hallmark-test-blobs')),
  clock: () => new Date(),
  log: createLogger({ instance: 'test', level: 'silent' }),
  readiness: {},
  requestTimeoutMs: 1_000,
});

describe('gateway routes', () => {
  it('serves every route of the contracts', async () => {
    const app = await buildGatewayApp(deps());
    await app.ready();
    for (const route of routes) {
      expect(app.hasRoute({ method: route.method, url: routerPathOf(route) }), `${route.method} ${route.path}`).toBe(true);
    }
    await app.close();
  });

  it('refuses to register a route that is not in the contracts', async () => {
    const app = await buildGatewayApp(deps());
    expect(() => app.get('/api/v1/undocumented', async () => 'hidden')).toThrow(/not in @hallmark\/contracts/);
    await app.close();
  });
});
