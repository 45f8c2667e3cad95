import { randomBytes } from 'node:crypto';
import { deleteNamespaceStreams } from '@hallmark/bus';
import { createTestDatabase, type TestDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DistributedConfig, readConfig } from './config.ts';
import { connectDistributed } from './infrastructure.ts';
import { createLogger } from './logger.ts';
import { sessionNameOf } from './release-gates.ts';

// A distributed process opens at most HALLMARK_DATABASE_POOL_MAX pooled PostgreSQL connections
// (10 by default), so operators can fit replicas × pool under max_connections (infra/k8s/config.yaml).
// Before, the pool was fixed at 10 and nothing could lower it: a review of the deployment files
// counted ~350 connections at the autoscalers' maximums against PostgreSQL's default of 100.

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase('pool');
});
afterAll(async () => {
  await database?.drop();
});

describe('HALLMARK_DATABASE_POOL_MAX', () => {
  it('defaults to 10', () => {
    const config = readConfig(DistributedConfig, {
      HALLMARK_NATS_URL: 'nats://127.0.0.1:4222',
      HALLMARK_DATABASE_URL: database.url,
      HALLMARK_REDIS_URL: 'redis://127.0.0.1:6379',
      HALLMARK_BUS_SECRET: 'ab'.repeat(32),
    });
    expect(config.HALLMARK_DATABASE_POOL_MAX).toBe(10);
  });

  it('bounds the connections a process holds however many queries it sends at once', async () => {
    const service = `pool-test-${randomBytes(3).toString('hex')}`;
    const namespace = `pooltest${randomBytes(3).toString('hex')}`;
    const config = readConfig(DistributedConfig, {
      HALLMARK_NATS_URL: 'nats://127.0.0.1:4222',
      HALLMARK_DATABASE_URL: database.url,
      HALLMARK_REDIS_URL: 'redis://127.0.0.1:6379',
      HALLMARK_BUS_SECRET: 'ab'.repeat(32),
      HALLMARK_NAMESPACE: namespace,
      HALLMARK_DATABASE_POOL_MAX: '3',
    });
    const infra = await connectDistributed(config, service, createLogger({ instance: 'test', level: 'silent' }));
    try {
      let most = 0;
      const count = async () => {
        const [row] = await infra.db.query<{ n: string }>(
          'SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1',
          [sessionNameOf(service)],
        );
        most = Math.max(most, Number(row?.n));
      };
      await Promise.all([...Array.from({ length: 12 }, () => infra.db.query('SELECT pg_sleep(0.2)')), count(), count()]);
      await count();
      // The pool's 3 (the event store's LISTEN, if it holds one, under another name or none here).
      expect(most).toBeGreaterThan(0);
      expect(most).toBeLessThanOrEqual(3);
    } finally {
      await infra.close();
      await deleteNamespaceStreams('nats://127.0.0.1:4222', namespace);
    }
  });
});
