import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteNamespaceStreams } from '@hallmark/bus';
import { auditExport, type ComplianceExportDocument, type JsonWebKeySet } from '@hallmark/client';
import { createPostgresDatabase, createTestDatabase, type TestDatabase } from '@hallmark/sql';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earlyInWindow } from '../support/client-address.ts';
import { freePort } from '../support/distributed-product.ts';
import { call as callApi } from '../support/embedded.ts';
import { type ServiceProcess, startServiceProcess } from '../support/service-process.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;
const call = async (url: string, method: string, path: string, options: Parameters<typeof callApi>[3]) => {
  const { status, body } = await callApi(url, method, path, options);
  return { status, body: body as Json };
};

// The distributed form: each service its own OS process, on this machine's real NATS, PostgreSQL
// and Redis, with a namespace and a database of this run's own.
const natsUrl = process.env.HALLMARK_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const redisUrl = process.env.HALLMARK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const namespace = `e2e_${randomUUID().slice(0, 8)}`;

let database: TestDatabase;
let gatewayUrl: string;
let secondGatewayUrl: string;
const operatorKey = `svc_live_${randomUUID().replaceAll('-', '')}${randomUUID().replaceAll('-', '')}`;
let env: Record<string, string>;
let blobDir: string;
const processes: ServiceProcess[] = [];

function start(service: string, name = service, extraEnv: Record<string, string> = {}): ServiceProcess {
  const started = startServiceProcess(service, { ...env, ...extraEnv }, name);
  processes.push(started);
  return started;
}

/** With the operator's key: a keyless ping is held to 10 a second per client address. */
async function ping(service: string, body: object = {}, requestId?: string) {
  const response = await fetch(`${gatewayUrl}/api/v1/system/ping/${service}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': operatorKey,
      ...(requestId ? { 'x-request-id': requestId } : {}),
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> & { error?: { code: string } } };
}

beforeAll(async () => {
  database = await createTestDatabase('e2e');
  // Photos: the gateways write them, auction-service reads them; all mount this one folder.
  blobDir = await mkdtemp(join(tmpdir(), 'hallmark-e2e-blobs-'));
  const port = await freePort();
  const secondPort = await freePort();
  gatewayUrl = `http://127.0.0.1:${port}`;
  secondGatewayUrl = `http://127.0.0.1:${secondPort}`;
  env = {
    HALLMARK_NATS_URL: natsUrl,
    HALLMARK_DATABASE_URL: database.url,
    HALLMARK_REDIS_URL: redisUrl,
    HALLMARK_NAMESPACE: namespace,
    HALLMARK_LOG_LEVEL: 'debug',
    HALLMARK_REQUEST_TIMEOUT_MS: '3000',
    HALLMARK_PROBE_PORT: '0',
    HALLMARK_MASTER_KEY: '42'.repeat(32),
    // A made-up master key is for test deployments only.
    HALLMARK_ENVIRONMENT: 'test',
    // Signs the requests services accept over NATS (every process holds the same one).
    HALLMARK_BUS_SECRET: randomBytes(32).toString('hex'),
    HALLMARK_BOOTSTRAP_KEY: operatorKey,
    HALLMARK_BLOB_DIR: blobDir,
  };
  start('gateway', 'gateway', { PORT: String(port), HALLMARK_HOST: '127.0.0.1' });
  start('gateway', 'gateway-2', { PORT: String(secondPort), HALLMARK_HOST: '127.0.0.1' });
  start('code-service', 'code-service-1');
  start('code-service', 'code-service-2');
  start('verify-service');
  start('auction-service');
  start('compliance-service');
  for (const url of [gatewayUrl, secondGatewayUrl]) {
    await waitFor(`the gateway at ${url} to be ready`, async () => ((await fetch(`${url}/ready`)).ok ? true : undefined), {
      timeoutMs: 60_000,
    });
  }
  try {
    for (const service of ['code-service', 'verify-service', 'auction-service', 'compliance-service']) {
      await waitFor(`${service} to answer`, async () => ((await ping(service)).status === 200 ? true : undefined), {
        timeoutMs: 60_000,
      });
    }
  } catch (error) {
    // Say why: each process's exit code, standard error and last lines.
    for (const started of processes) {
      console.error(
        `--- ${started.name} (exit ${started.child.exitCode})\n${started.stderr.join('')}${JSON.stringify(started.lines.slice(-5))}`,
      );
    }
    throw error;
  }
});

afterAll(async () => {
  await Promise.all(processes.map((process) => process.stop('SIGTERM')));
  await database?.drop();
  await deleteNamespaceStreams(natsUrl, namespace);
  await rm(blobDir, { recursive: true, force: true });
});

describe('distributed form: five services as separate processes', () => {
  it('reaches every service over NATS and back, with the request id in both processes’ logs', async () => {
    for (const service of ['code-service', 'verify-service', 'auction-service', 'compliance-service']) {
      const requestId = `e2e-${service}-${randomUUID().slice(0, 8)}`;
      const { status, body } = await ping(service, {}, requestId);
      expect(status).toBe(200);
      expect(body).toMatchObject({ service, requestId });
      const servingProcesses = processes.filter((candidate) => candidate.name.startsWith(service));
      await waitFor(`${service} to log ${requestId}`, async () =>
        servingProcesses.some((candidate) =>
          candidate.lines.some((line) => line.requestId === requestId && line.msg === 'rpc answered'),
        )
          ? true
          : undefined,
      );
      const gateway = processes.find((candidate) => candidate.name === 'gateway');
      await waitFor(`the gateway to log ${requestId}`, async () =>
        gateway?.lines.some((line) => line.requestId === requestId && line.msg === 'request') ? true : undefined,
      );
    }
  });

  it('spreads requests to one service over its two replicas', async () => {
    const instances = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const { status, body } = await ping('code-service');
      expect(status).toBe(200);
      instances.add(String(body.instance));
    }
    expect(instances.size).toBe(2);
  });

  it('serves liveness and readiness probes from a backend service', async () => {
    const service = processes.find((candidate) => candidate.name === 'auction-service');
    const started = await waitFor('the started line', async () => service?.lines.find((line) => line.msg === 'started'));
    const probe = `http://127.0.0.1:${started.probePort}`;
    expect((await fetch(`${probe}/health`)).status).toBe(200);
    const ready = await fetch(`${probe}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ready',
      checks: { nats: { ok: true }, postgres: { ok: true }, redis: { ok: true } },
    });
  });

  it('turns a killed service into 503 within 2 s, and recovers when it comes back', async () => {
    const victim = processes.find((candidate) => candidate.name === 'verify-service');
    if (!victim) throw new Error('verify-service not started');
    await victim.stop('SIGKILL');
    const killedAt = Date.now();
    // A request that reached the process in the instant before NATS saw it die waits out its
    // timeout (3 s here); what must hold is that requests are refused quickly from then on. So a
    // probe gives up after 500 ms and the next one is sent.
    try {
      const unavailable = await waitFor(
        'a 503',
        async () => {
          const response = await fetch(`${gatewayUrl}/api/v1/system/ping/verify-service`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{}',
            signal: AbortSignal.timeout(500),
          }).catch(() => undefined);
          if (response?.status !== 503) return undefined;
          return {
            status: response.status,
            retryAfter: response.headers.get('retry-after'),
            body: (await response.json()) as { error?: { code: string; details?: { reason?: string } } },
          };
        },
        { timeoutMs: 2_000, intervalMs: 50 },
      );
      expect(Date.now() - killedAt).toBeLessThan(2_000);
      expect(unavailable.body.error?.code).toBe('SERVICE_UNAVAILABLE');
      expect(unavailable.body.error?.details?.reason).toBe('no-responders');
      expect(unavailable.retryAfter).toBe('1');
    } finally {
      // Back for the tests after this one, whatever happened above.
      start('verify-service', 'verify-service-restarted');
    }
    const recovered = await waitFor(
      'verify-service to answer again',
      async () => {
        const result = await ping('verify-service');
        return result.status === 200 ? result : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(recovered.body.service).toBe('verify-service');
  });

  it('finishes the request in flight when a service is told to stop', async () => {
    const service = processes.find((candidate) => candidate.name === 'compliance-service');
    if (!service) throw new Error('compliance-service not started');
    const inFlight = ping('compliance-service', { delayMs: 1_500 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exitCode = service.stop('SIGTERM');
    const { status } = await inFlight;
    expect(status).toBe(200);
    expect(await exitCode).toBe(0);
    expect((await ping('compliance-service')).status).toBe(503);
    // Back for the suites after this one: auction events read the compliance config.
    start('compliance-service', 'compliance-service-restarted');
    await waitFor(
      'compliance-service to answer again',
      async () => ((await ping('compliance-service')).status === 200 ? true : undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 200,
      },
    );
  });

  it('refuses to start with a bad setting, naming the variable', async () => {
    const misconfigured = start('code-service', 'misconfigured', {
      HALLMARK_NATS_URL: 'localhost:4222',
      HALLMARK_REQUEST_TIMEOUT_MS: 'soon',
    });
    expect(await misconfigured.exited).toBe(78);
    const stderr = misconfigured.stderr.join('');
    expect(stderr).toContain('HALLMARK_NATS_URL');
    expect(stderr).toContain('HALLMARK_REQUEST_TIMEOUT_MS');
    const withoutMasterKey = start('code-service', 'no-master-key', { HALLMARK_MASTER_KEY: '' });
    expect(await withoutMasterKey.exited).toBe(78);
    expect(withoutMasterKey.stderr.join('')).toContain('HALLMARK_MASTER_KEY');
  });

  it('refuses to start a service of another installation under this namespace on the same NATS and Redis, and keeps serving', async () => {
    const otherDatabase = await createTestDatabase('e2e');
    try {
      // Another installation's code-service (its own database, keys and bus secret), pointed at this one's NATS and Redis
      // under the same HALLMARK_NAMESPACE: it would take a share of this installation's requests and events.
      const intruder = start('code-service', 'other-installation', {
        HALLMARK_DATABASE_URL: otherDatabase.url,
        HALLMARK_BUS_SECRET: randomBytes(32).toString('hex'),
        HALLMARK_MASTER_KEY: '43'.repeat(32),
      });
      const stillRunning = new Promise((resolve) => setTimeout(() => resolve('still running after 30 s'), 30_000).unref());
      expect(await Promise.race([intruder.exited, stillRunning])).toBe(78);
      const installationIn = async (url: string) => {
        const db = createPostgresDatabase({ connectionString: url, maxConnections: 1 });
        try {
          const [row] = await db.query<{ id: string }>('SELECT id::text AS id FROM installation');
          return row?.id;
        } finally {
          await db.close();
        }
      };
      const stderr = intruder.stderr.join('');
      expect(stderr).toContain(`HALLMARK_NAMESPACE "${namespace}" is in use on NATS by another installation`);
      expect(stderr).toContain(`installation id ${await installationIn(database.url)}`);
      expect(stderr).toContain(`this database's is ${await installationIn(otherDatabase.url)}`);
      // It took no request: every ping reaches this installation's code-services.
      for (let round = 0; round < 10; round++) expect((await ping('code-service')).status).toBe(200);
    } finally {
      await otherDatabase.drop();
    }
  });
});

describe('distributed form: two gateways share keys and limits', () => {
  const api = (url: string, method: string, path: string, key: string, body?: unknown) =>
    call(url, method, `/api/v1${path}`, { key, ...(body === undefined ? {} : { body }) });

  async function tenantKey(body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
    const account = await api(gatewayUrl, 'POST', '/accounts', operatorKey, {
      name: `Tenant ${randomUUID()}`,
      tier: 'enterprise',
    });
    expect(account.status).toBe(201);
    const key = await api(gatewayUrl, 'POST', '/keys', account.body.apiKey.secret, body);
    expect(key.status).toBe(201);
    return { id: key.body.id, secret: key.body.secret };
  }

  it('refuses a key on the other gateway within 1 s of its revocation', async () => {
    const account = await api(gatewayUrl, 'POST', '/accounts', operatorKey, {
      name: `Tenant ${randomUUID()}`,
      tier: 'enterprise',
    });
    const owner = account.body.apiKey.secret as string;
    const victim = await api(gatewayUrl, 'POST', '/keys', owner, { name: 'victim', scopes: ['keys:read'] });
    // The second gateway has the key in its cache.
    expect((await api(secondGatewayUrl, 'GET', '/keys', victim.body.secret)).status).toBe(200);
    const revoked = await api(gatewayUrl, 'POST', `/keys/${victim.body.id}/revoke`, owner);
    expect(revoked.status).toBe(200);
    const revokedAt = Date.now();
    const refused = await waitFor(
      'the second gateway to refuse the key',
      async () => {
        const response = await api(secondGatewayUrl, 'GET', '/keys', victim.body.secret);
        return response.status === 401 ? response : undefined;
      },
      { timeoutMs: 1_000, intervalMs: 20 },
    );
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
    expect(refused.body.error.code).toBe('REVOKED_API_KEY');
  });

  it('lets exactly 100 of 300 concurrent requests through an account’s daily 100 in test, across three keys and both gateways', async () => {
    // Limits are the account's in an environment: more keys add nothing (one Redis hash tag, batched exactly).
    const account = await api(gatewayUrl, 'POST', '/accounts', operatorKey, {
      name: `Tenant ${randomUUID()}`,
      tier: 'enterprise',
    });
    const sandboxes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const key = await api(gatewayUrl, 'POST', '/keys', account.body.apiKey.secret, {
        name: `sandbox ${i}`,
        scopes: ['keys:read'],
        environment: 'test',
      });
      expect(key.status).toBe(201);
      sandboxes.push(key.body.secret);
    }
    // The daily 100 counts per UTC day: all 300 requests in one day.
    await earlyInWindow(86_400_000, 30_000);
    const responses = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        api(i % 2 === 0 ? gatewayUrl : secondGatewayUrl, 'GET', '/keys?limit=1', sandboxes[i % 3] as string),
      ),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(100);
    expect(statuses.filter((status) => status === 429)).toHaveLength(200);
    expect(responses.find((response) => response.status === 429)?.body.error.code).toBe('RATE_LIMITED');
  });

  it('counts failed authentications of one address across both gateways, and still serves a valid key', async () => {
    const owner = (await tenantKey({ name: 'reader', scopes: ['keys:read'] })).secret;
    const unknown = () => `svc_live_${randomUUID().replaceAll('-', '')}${randomUUID().replaceAll('-', '')}`;
    // 20 a minute by default; a minute boundary may fall in between, so go on until refused.
    let refused: Json | undefined;
    for (let i = 0; i < 45 && !refused; i++) {
      const response = await api(i % 2 === 0 ? gatewayUrl : secondGatewayUrl, 'GET', '/keys', unknown());
      if (response.status === 429) refused = response;
      else expect(response.status).toBe(401);
    }
    expect(refused?.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 'failed-authentications-per-address' } });
    expect(refused?.body.error.details.retryAfterSeconds).toBeGreaterThan(0);
    expect((await api(secondGatewayUrl, 'GET', '/keys', owner)).status).toBe(200);
    expect((await api(gatewayUrl, 'GET', '/keys', owner)).status).toBe(200);
  });
});

describe('distributed form: codes over NATS, PostgreSQL and Redis', () => {
  const api = (url: string, path: string, key: string, body: unknown) => call(url, 'POST', `/api/v1${path}`, { key, body });
  const gtin = '09506000134352';
  let key: string;

  beforeAll(async () => {
    // The brand owns the GTIN it signs for (docs/SIGNING.md): the operator grants it.
    const account = await api(gatewayUrl, '/accounts', operatorKey, { name: `Brand ${randomUUID()}`, tier: 'enterprise' });
    key = account.body.apiKey.secret as string;
    const grant = await api(gatewayUrl, `/accounts/${account.body.account.id}/gtins`, operatorKey, { gtin });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
  });

  it('generates on one gateway and verifies on the other, with every spec error code of both endpoints', async () => {
    const serialNumber = `D-${randomUUID().slice(0, 8)}`;
    const generated = await api(gatewayUrl, '/code/generate', key, { gtin, serialNumber, batchNumber: 'L1' });
    expect(generated.status).toBe(201);
    const verified = await api(secondGatewayUrl, '/code/verify', key, { url: generated.body.url });
    expect(verified.body).toMatchObject({
      verdict: 'AUTHENTIC',
      metadata: { totalScans: 1 },
      checks: { signature: { passed: true } },
    });

    expect((await api(gatewayUrl, '/code/generate', key, { gtin, serialNumber })).body.error.code).toBe('DUPLICATE_SERIAL');
    expect(
      (await api(gatewayUrl, '/code/generate', key, { gtin: '09506000134353', serialNumber: 'x' })).body.error,
    ).toMatchObject({
      code: 'INVALID_GTIN',
      details: { provided: '09506000134353', expected: '09506000134352' },
    });
    expect((await api(gatewayUrl, '/code/generate', key, { serialNumber: 'x' })).body.error.code).toBe('MISSING_REQUIRED_FIELD');
    expect((await api(gatewayUrl, '/code/verify', key, { url: 'nonsense' })).body.error.code).toBe('INVALID_URL');
    expect((await api(gatewayUrl, '/code/verify', key, { url: `https://x.y/01/${gtin}/21/A` })).body.error.code).toBe(
      'MISSING_SIGNATURE',
    );
    // A GTIN whose owner has no key yet: nothing could have signed it.
    const newcomer = await api(gatewayUrl, '/accounts', operatorKey, { name: 'Stranger', tier: 'free' });
    await api(gatewayUrl, `/accounts/${newcomer.body.account.id}/gtins`, operatorKey, { gtin: '09506000134369' });
    const unknown = await api(gatewayUrl, '/code/verify', key, {
      url: `https://x.y/01/09506000134369/21/none?sig=${'a'.repeat(86)}`,
    });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'KEY_NOT_FOUND']);
    const forged = generated.body.url.replace('/10/L1', '/10/L2');
    expect((await api(secondGatewayUrl, '/code/verify', key, { url: forged })).body.verdict).toBe('COUNTERFEIT');
  });

  it('generates a batch of codes with large metadata: calls to code-service split by size, none over NATS’s 1 MB', async () => {
    // 120 items of 15 KB of metadata each: 1.8 MB, which one bus message of 500 items could not carry.
    const prefix = `BIG-${randomUUID().slice(0, 8)}`;
    const items = Array.from({ length: 120 }, (_, i) => ({
      gtin,
      serialNumber: `${prefix}-${i}`,
      metadata: { name: `Item ${i}`, notes: 'n'.repeat(15_000) },
    }));
    // And one item of 2 MB, which no bus message could carry: refused on its own, the rest made.
    items.splice(60, 0, { gtin, serialNumber: `${prefix}-huge`, metadata: { name: 'Huge', notes: 'h'.repeat(2_000_000) } });
    const batch = await api(gatewayUrl, '/code/generate/batch', key, { items });
    expect(batch.status, JSON.stringify(batch.body).slice(0, 500)).toBe(200);
    expect(batch.body.results).toHaveLength(121);
    const made = batch.body.results.filter((result: { code?: unknown }) => result.code);
    expect(made).toHaveLength(120);
    expect(batch.body.results[60]).toMatchObject({ index: 60, error: { code: 'VALIDATION_ERROR' } });
    expect(batch.body.results.map((result: { index: number }) => result.index)).toEqual(items.map((_, i) => i));
    const last = batch.body.results[120].code;
    const verified = await api(secondGatewayUrl, '/code/verify', key, { url: last.url });
    expect(verified.body.verdict).toBe('AUTHENTIC');
  });

  it('counts 200 parallel verifications across both gateways exactly, in Redis', async () => {
    const generated = await api(gatewayUrl, '/code/generate', key, { gtin, serialNumber: `P-${randomUUID().slice(0, 8)}` });
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        api(i % 2 ? gatewayUrl : secondGatewayUrl, '/code/verify', key, { url: generated.body.url }),
      ),
    );
    expect(responses.every((response) => response.status === 200)).toBe(true);
    expect(new Set(responses.map((response) => response.body.metadata.totalScans)).size).toBe(200);
    expect(Math.max(...responses.map((response) => response.body.metadata.totalScans as number))).toBe(200);
    // And each scan reaches PostgreSQL through JetStream and the scan history projection.
    const db = createPostgresDatabase({ connectionString: database.url });
    let stored = 0;
    try {
      await waitFor(
        'the scans in PostgreSQL',
        async () => {
          const [row] = await db.query<{ n: string }>('SELECT count(*) AS n FROM scans WHERE serial = $1', [
            generated.body.serial,
          ]);
          stored = Number(row?.n);
          return stored === 200 ? 200 : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 200 },
      );
    } catch (error) {
      // Say why: how many arrived, and what verify-service warned about on the way.
      const warnings = processes
        .filter((candidate) => candidate.name.startsWith('verify-service'))
        .flatMap((candidate) =>
          candidate.lines
            .filter((line) => ['warn', 'error', 'fatal'].includes(String(line.level)))
            .map((line) => ({ ...line, process: candidate.name })),
        );
      throw new Error(`${stored} of 200 scans stored; verify-service warnings: ${JSON.stringify(warnings.slice(-10))}`, {
        cause: error,
      });
    } finally {
      await db.close();
    }
  });
});

describe('distributed form: auction objects, compliance and the resolver', () => {
  it('binds a photo over 1 MB through the shared blob store, and serves the public view, the log and the page', async () => {
    const key = (
      await call(gatewayUrl, 'POST', '/api/v1/accounts', {
        key: operatorKey,
        body: { name: `House ${randomUUID()}`, tier: 'enterprise' },
      })
    ).body.apiKey.secret as string;
    const registered = await call(gatewayUrl, 'POST', '/api/v1/auction/objects/register', {
      key,
      body: { title: 'Distributed watch', category: 'watch', ownerId: 'client-1' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const { object, qr_data } = registered.body;

    // Random pixels do not compress: about 1.5 MB, more than one NATS message may carry.
    const photo = await sharp(randomBytes(720 * 720 * 3), { raw: { width: 720, height: 720, channels: 3 } })
      .png()
      .toBuffer();
    expect(photo.length).toBeGreaterThan(1_048_576);
    const form = new FormData();
    form.append('angle', 'dial');
    form.append('photo', new Blob([photo], { type: 'image/png' }), 'dial.png');
    const uploaded = await fetch(`${secondGatewayUrl}/api/v1/auction/objects/${object.id}/photos`, {
      method: 'POST',
      headers: { 'x-api-key': key },
      body: form,
    });
    const bound = (await uploaded.json()) as Json;
    expect(uploaded.status, JSON.stringify(bound)).toBe(201);
    expect(bound).toMatchObject({ angle: 'dial', photo_status: { count: 1, required: 4 } });

    const listed = await call(secondGatewayUrl, 'POST', '/api/v1/auction/provenance/events', {
      key,
      body: { objectId: object.service_serial, eventType: 'listed', actorRole: 'auction_house' },
    });
    expect(listed.body, JSON.stringify(listed.body)).toMatchObject({ status: 'listed', position: 3 });
    const publicView = await call(gatewayUrl, 'GET', `/api/v1/auction/public/verify/${object.service_serial}`, {});
    expect(publicView.body).toMatchObject({ status: 'authentic', provenance: { event_count: 3, chain_intact: true } });

    await waitFor('the object in the Merkle log', async () => {
      const root = await call(gatewayUrl, 'GET', `/api/v1/compliance/${object.id}/merkle/root`, { key });
      return root.body.treeSize === 3 ? true : undefined;
    });
    const exported = (await (
      await fetch(`${secondGatewayUrl}/api/v1/compliance/${object.service_serial}/export`, { headers: { 'x-api-key': key } })
    ).json()) as ComplianceExportDocument;
    const jwks = (await call(gatewayUrl, 'GET', '/.well-known/jwks.json', {})).body as JsonWebKeySet;
    expect(auditExport(exported, jwks)).toMatchObject({ valid: true, treeSize: 3, eventsChecked: 3 });

    const page = await fetch(
      `${secondGatewayUrl}${new URL(qr_data.gs1DigitalLink).pathname}${new URL(qr_data.gs1DigitalLink).search}`,
    );
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Distributed watch');
  });
});
