// More kills of the embedded form mid-write (`pnpm test:long`; the ones `pnpm test` runs are
// test/e2e/hostile-embedded-kills.test.ts): a kill during the very first start, single generates,
// an unkeyed batch, signing-key rotations, API keys, a kill during the recovery of a kill, and the
// folder's lock. Over real HTTP against the real `hallmark start` process.
import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call } from '../support/embedded.ts';
import { runHallmark } from '../support/hallmark-cli.ts';
import { spawnHallmarkServer } from '../support/hallmark-server.ts';
import {
  api,
  checkAsset,
  cleanUp,
  gtin,
  type Json,
  kill,
  listCodes,
  lockHolder,
  newDataDir,
  ok,
  pool,
  startServer,
  tenant,
} from '../support/killed-product.ts';
import { waitFor } from '../support/wait.ts';

afterEach(cleanUp);

describe('the embedded form killed (SIGKILL) mid-write and started again', () => {
  it('starts again after being killed at any moment of its very first start (initdb, migrations, operator key)', async () => {
    // Kill the first start of an empty folder at growing delays; every following start must come up.
    const outcomes: string[] = [];
    for (const delayMs of [300, 900, 1_600, 2_600]) {
      const dataDir = await newDataDir();
      const start = await spawnHallmarkServer(dataDir);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      await start.dispose();
      try {
        const second = await startServer(dataDir, {}, { healthTimeoutMs: 40_000 });
        const { key } = await tenant(second.url, dataDir);
        const code = ok(await api(second.url, key, 'POST', '/code/generate', { gtin, serialNumber: 'FIRST-1' }), 201);
        const verdict = ok(await api(second.url, key, 'POST', '/code/verify', { url: code.url })).verdict;
        outcomes.push(`${delayMs}ms: ok ${verdict}`);
        await kill(second);
      } catch (error) {
        outcomes.push(
          `${delayMs}ms: FAILED ${(error as Error).message.slice(0, 600)} ${String((error as Error).cause ?? '').slice(0, 400)}`,
        );
      }
    }
    expect(
      outcomes.filter((outcome) => outcome.includes('FAILED')),
      outcomes.join('\n'),
    ).toEqual([]);
  }, 240_000);

  it('keeps every acknowledged single generate whole, and answers keyed retries of the cut-off ones once', async () => {
    const dataDir = await newDataDir();
    const env = { HALLMARK_IDEMPOTENCY_LEASE_MS: '1500' };
    const first = await startServer(dataDir, env);
    const { key } = await tenant(first.url, dataDir);
    interface Attempt {
      serial: string;
      idempotencyKey: string | undefined;
      status?: number;
      body?: Json;
      error?: string;
      at?: number;
    }
    const attempts: Attempt[] = [];
    let stop = false;
    const workers = Array.from({ length: 24 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const serial = `S${w}-${i}`;
        const attempt: Attempt = { serial, idempotencyKey: w % 2 === 0 ? `single-${serial}-${randomUUID()}` : undefined };
        attempts.push(attempt);
        try {
          const answer = await api(
            first.url,
            key,
            'POST',
            '/code/generate',
            { gtin, serialNumber: serial, batchNumber: 'L1' },
            attempt.idempotencyKey ? { 'idempotency-key': attempt.idempotencyKey } : undefined,
          );
          attempt.status = answer.status;
          attempt.body = answer.body;
          attempt.at = Date.now();
        } catch (error) {
          attempt.error = String(error);
          return;
        }
      }
    });
    await waitFor(
      '300 acknowledged codes',
      async () => (attempts.filter((a) => a.status === 201).length >= 300 ? true : undefined),
      {
        timeoutMs: 30_000,
        intervalMs: 5,
      },
    );
    await kill(first);
    stop = true;
    await Promise.all(workers);
    const acknowledged = attempts.filter((a) => a.status === 201);
    const cut = attempts.filter((a) => a.status === undefined);
    const refused = attempts.filter((a) => a.status !== undefined && a.status !== 201);
    expect(refused.map((a) => `${a.serial} ${a.status} ${JSON.stringify(a.body)}`)).toEqual([]);
    expect(await lockHolder(dataDir), 'the dead server’s lock is left behind').toBeDefined();

    const second = await startServer(dataDir, env);
    const holder = await lockHolder(dataDir);
    expect(holder?.pid).toBe(second.child.pid);

    // The keyed cut-off ones: the retry (same key, same body) answers 201 once, made or found.
    const retried = new Map<string, Json>();
    for (const attempt of cut.filter((a) => a.idempotencyKey)) {
      const answer = await waitFor(
        `the keyed retry of ${attempt.serial}`,
        async () => {
          const again = await api(
            second.url,
            key,
            'POST',
            '/code/generate',
            { gtin, serialNumber: attempt.serial, batchNumber: 'L1' },
            {
              'idempotency-key': attempt.idempotencyKey as string,
            },
          );
          return again.status === 409 && again.body.error?.code === 'CONFLICT' ? undefined : again;
        },
        { timeoutMs: 20_000, intervalMs: 250 },
      );
      expect(answer.status, `${attempt.serial} ${JSON.stringify(answer.body)}`).toBe(201);
      retried.set(attempt.serial, answer.body);
    }
    // A keyed acknowledged one, retried after the restart: the same answer (replayed).
    const keyedAcknowledged = acknowledged.filter((a) => a.idempotencyKey).slice(-5);
    for (const attempt of keyedAcknowledged) {
      const again = await api(
        second.url,
        key,
        'POST',
        '/code/generate',
        { gtin, serialNumber: attempt.serial, batchNumber: 'L1' },
        {
          'idempotency-key': attempt.idempotencyKey as string,
        },
      );
      expect(again.status, JSON.stringify(again.body)).toBe(201);
      expect(again.body.assetId).toBe(attempt.body?.assetId);
      expect(again.body.url).toBe(attempt.body?.url);
    }

    const listed = await listCodes(second.url, key);
    const bySerial = new Map(listed.map((code) => [code.serialNumber as string, code]));
    expect(bySerial.size).toBe(listed.length);
    const lost = acknowledged.filter((a) => bySerial.get(a.serial)?.assetId !== a.body?.assetId);
    expect(
      lost.map((a) => a.serial),
      `acknowledged ${acknowledged.length}, listed ${listed.length}`,
    ).toEqual([]);
    for (const [serial, body] of retried) expect(bySerial.get(serial)?.assetId).toBe(body.assetId);
    // Nothing but what was asked: every listed serial was attempted.
    const attempted = new Set(attempts.map((a) => a.serial));
    expect(listed.filter((code) => !attempted.has(code.serialNumber))).toEqual([]);

    const jwks = (await call<Json>(second.url, 'GET', '/.well-known/jwks.json')).body;
    const problems: string[] = [];
    await pool(listed, 16, async (code) => {
      const verdict = await api(second.url, key, 'POST', '/code/verify', { url: code.url });
      if (verdict.body.verdict !== 'AUTHENTIC')
        problems.push(`${code.serialNumber} ${verdict.status} ${JSON.stringify(verdict.body).slice(0, 300)}`);
      const checked = await checkAsset(second.url, key, code.assetId, problems.length < 5 && Math.random() < 0.05, jwks);
      if (checked.eventCount !== 1) problems.push(`${code.assetId} has ${checked.eventCount} events`);
      problems.push(...checked.problems);
    });
    console.log(
      `singles: acknowledged ${acknowledged.length}, cut ${cut.length} (keyed ${retried.size}), listed ${listed.length}`,
    );
    expect(problems, `acknowledged ${acknowledged.length}, cut ${cut.length}, listed ${listed.length}`).toEqual([]);
    await kill(second);
  }, 120_000);

  it('leaves an unkeyed batch cut off by the kill whole code by code: every stored code has its event and tree', async () => {
    const dataDir = await newDataDir();
    const first = await startServer(dataDir);
    const { key } = await tenant(first.url, dataDir);
    const items = Array.from({ length: 3_000 }, (_, i) => ({ gtin, serialNumber: `UB-${i}`, batchNumber: 'L2' }));
    const attempt = api(first.url, key, 'POST', '/code/generate/batch', { items }).then(
      (answer) => ({ answer }),
      (error: unknown) => ({ error: String(error) }),
    );
    await waitFor(
      'the batch’s first codes',
      async () => ((await api(first.url, key, 'GET', '/codes?limit=1')).body.data?.length ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 20 },
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await kill(first);
    await attempt;

    const second = await startServer(dataDir);
    const listed = await listCodes(second.url, key);
    const retry = ok(await api(second.url, key, 'POST', '/code/generate/batch', { items }));
    const made = retry.results.filter((result: Json) => result.code).length;
    const duplicates = retry.results.filter((result: Json) => result.error?.code === 'DUPLICATE_SERIAL').length;
    const summary = `stored before ${listed.length}, retry made ${made}, duplicates ${duplicates}`;
    console.log(`unkeyed batch: ${summary}`);
    expect(duplicates, summary).toBe(listed.length);
    expect(made + duplicates, summary).toBe(items.length);
    // Every code the killed batch stored: its event, chain and tree (all of them).
    const problems: string[] = [];
    await pool(listed, 16, async (code) => {
      const checked = await checkAsset(second.url, key, code.assetId, false);
      if (checked.eventCount !== 1) problems.push(`${code.assetId} has ${checked.eventCount} events`);
      problems.push(...checked.problems);
    });
    expect(problems.slice(0, 10), summary).toEqual([]);
    await kill(second);
  }, 120_000);

  it('keeps signing-key rotations and the codes signed around them', async () => {
    const dataDir = await newDataDir();
    const first = await startServer(dataDir);
    const { key } = await tenant(first.url, dataDir);
    const acknowledged: Json[] = [];
    const rotations: { kid?: string; status?: number; at?: number; startedAt: number }[] = [];
    let stop = false;
    const generators = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        try {
          const startedAt = Date.now();
          const answer = await api(first.url, key, 'POST', '/code/generate', { gtin, serialNumber: `R${w}-${i}` });
          if (answer.status === 201) acknowledged.push({ ...answer.body, startedAt });
        } catch {
          return;
        }
      }
    });
    const rotator = (async () => {
      while (!stop) {
        const rotation: (typeof rotations)[number] = { startedAt: Date.now() };
        rotations.push(rotation);
        try {
          const answer = await api(first.url, key, 'POST', '/keys/signing/rotate', {}, { 'idempotency-key': randomUUID() });
          rotation.status = answer.status;
          rotation.kid = answer.body.id ?? answer.body.kid ?? answer.body.key?.id;
          rotation.at = Date.now();
        } catch {
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 60));
      }
    })();
    await waitFor('six rotations', async () => (rotations.filter((r) => r.status === 201).length >= 6 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 5,
    });
    await kill(first);
    stop = true;
    await Promise.all([...generators, rotator]);
    expect(rotations.filter((r) => r.status !== undefined && r.status !== 201)).toEqual([]);

    const second = await startServer(dataDir);
    const signing = ok(await api(second.url, key, 'GET', '/keys?type=signing&limit=100')).keys as Json[];
    const active = signing.filter((k) => k.status === 'active');
    expect(active.length, JSON.stringify(signing.map((k) => [k.id, k.status]))).toBe(1);
    const jwks = (await call<Json>(second.url, 'GET', '/.well-known/jwks.json')).body;
    const published = new Set((jwks.keys as Json[]).map((k) => k.kid));
    const done = rotations.filter((r) => r.status === 201);
    for (const rotation of done) expect(published.has(rotation.kid), `${rotation.kid} published`).toBe(true);
    // The last acknowledged rotation's key, or a later one cut off by the kill, is the active one.
    const last = done.at(-1) as (typeof rotations)[number];
    const cutRotation = rotations.find((r) => r.status === undefined);
    expect([
      last.kid,
      ...(cutRotation ? signing.filter((k) => !done.some((r) => r.kid === k.id)).map((k) => k.id) : []),
    ]).toContain(active[0]?.id);
    const problems: string[] = [];
    await pool(acknowledged, 16, async (code) => {
      const verdict = await api(second.url, key, 'POST', '/code/verify', { url: code.url });
      if (verdict.body.verdict !== 'AUTHENTIC')
        problems.push(`${code.serial} ${verdict.status} ${JSON.stringify(verdict.body).slice(0, 300)}`);
      // A code asked for after a rotation was answered is signed with that key or a later one.
      const rotatedBefore = done.filter((r) => (r.at as number) < code.startedAt).at(-1);
      const kid = verdict.body.checks?.signature?.keyId;
      if (rotatedBefore && kid !== undefined) {
        const order = signing.map((k) => k.id).reverse();
        if (order.indexOf(kid) < order.indexOf(rotatedBefore.kid))
          problems.push(`${code.serial} signed by ${kid}, older than ${rotatedBefore.kid}`);
      }
    });
    expect(problems, `codes ${acknowledged.length}, rotations ${done.length}`).toEqual([]);
    await kill(second);
  }, 120_000);

  it('keeps API keys made and revoked just before the kill as acknowledged', async () => {
    const dataDir = await newDataDir();
    // Many revoked keys tried from one address: the failed-authentication limit is not what is tested.
    const env = { HALLMARK_AUTH_FAILURES_PER_MINUTE: '100000' };
    const first = await startServer(dataDir, env);
    const { key } = await tenant(first.url, dataDir);
    const made: string[] = [];
    const revoked: string[] = [];
    let stop = false;
    const workers = Array.from({ length: 6 }, async () => {
      while (!stop) {
        try {
          const created = await api(first.url, key, 'POST', '/keys', { name: 'k', scopes: ['assets:read'] });
          if (created.status !== 201) continue;
          const secret = created.body.secret as string;
          const id = created.body.key?.id ?? created.body.id;
          made.push(secret);
          const gone = await api(first.url, key, 'POST', `/keys/${id}/revoke`);
          if (gone.status === 200) revoked.push(secret);
        } catch {
          return;
        }
      }
    });
    await waitFor('60 revoked keys', async () => (revoked.length >= 60 ? true : undefined), { timeoutMs: 30_000, intervalMs: 5 });
    await kill(first);
    stop = true;
    await Promise.all(workers);
    const second = await startServer(dataDir, env);
    const problems: string[] = [];
    await pool(made, 8, async (secret) => {
      const answer = await api(second.url, secret, 'GET', '/codes?limit=1');
      const isRevoked = revoked.includes(secret);
      if (isRevoked && answer.status !== 401) problems.push(`revoked key answered ${answer.status}`);
      if (!isRevoked && answer.status !== 200 && answer.status !== 401) problems.push(`made key answered ${answer.status}`);
    });
    expect(problems, `made ${made.length}, revoked ${revoked.length}`).toEqual([]);
    await kill(second);
  }, 120_000);

  it('starts after being killed again during the recovery of a kill mid-batch', async () => {
    const dataDir = await newDataDir();
    const first = await startServer(dataDir);
    const { key } = await tenant(first.url, dataDir);
    const items = Array.from({ length: 3_000 }, (_, i) => ({ gtin, serialNumber: `DK-${i}` }));
    const attempt = api(first.url, key, 'POST', '/code/generate/batch', { items }).catch(() => undefined);
    await waitFor(
      'the batch’s first codes',
      async () => ((await api(first.url, key, 'GET', '/codes?limit=1')).body.data?.length ? true : undefined),
      {
        timeoutMs: 30_000,
        intervalMs: 20,
      },
    );
    await kill(first);
    await attempt;
    for (const delayMs of [200, 700, 1_500]) {
      const start = await spawnHallmarkServer(dataDir);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      await start.dispose();
    }
    const last = await startServer(dataDir, {}, { healthTimeoutMs: 40_000 });
    const listed = await listCodes(last.url, key);
    const problems: string[] = [];
    await pool(
      listed.filter((_, i) => i % 25 === 0),
      16,
      async (code) => {
        const checked = await checkAsset(last.url, key, code.assetId, false);
        problems.push(...checked.problems);
      },
    );
    expect(problems, `codes ${listed.length}`).toEqual([]);
    await kill(last);
  }, 120_000);

  it('lets the hallmark command use a folder whose server was killed, and the server start after it', async () => {
    const dataDir = await newDataDir();
    const first = await startServer(dataDir);
    await tenant(first.url, dataDir);
    const deadPid = first.child.pid;
    await kill(first);
    expect((await lockHolder(dataDir))?.pid).toBe(deadPid);
    const listed = await runHallmark(dataDir, { HOME: process.env.HOME ?? '/tmp' }, ['accounts', 'list', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split('\n').length).toBeGreaterThanOrEqual(1);
    const second = await startServer(dataDir);
    expect((await lockHolder(dataDir))?.pid).toBe(second.child.pid);
    expect((await stat(join(dataDir, 'hallmark.lock'))).mode & 0o777).toBe(0o600);
    await kill(second);
  }, 120_000);
});
