// The embedded form killed with SIGKILL in the middle of writes, then started again on the same data
// folder (a review of 2026-12-04; its finding fixed: a keyed batch's quota after a kill). Over real
// HTTP against the real `hallmark start` process; every answer the client got before the kill is
// recorded, and after the restart: each acknowledged write is there, whole (code with its event,
// chain and Merkle tree), and keyed retries answer once. The review's other kills (first starts,
// single and unkeyed generates, key rotations, API keys, kills during recovery, the lock) are
// test/long/embedded-kills.test.ts, in `pnpm test:long`.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { call } from '../support/embedded.ts';
import {
  api,
  checkAsset,
  cleanUp,
  gtin,
  gtinNumbered,
  type Json,
  kill,
  listCodes,
  newDataDir,
  ok,
  pool,
  settled,
  startServer,
  tenant,
} from '../support/killed-product.ts';
import { waitFor } from '../support/wait.ts';

afterEach(cleanUp);

describe('the embedded form killed (SIGKILL) mid-write and started again', () => {
  it('completes a keyed batch of 4,000 cut off by the kill exactly once on retry', async () => {
    const dataDir = await newDataDir();
    const env = { HALLMARK_IDEMPOTENCY_LEASE_MS: '1500' };
    const first = await startServer(dataDir, env);
    const { key } = await tenant(first.url, dataDir);
    const items = Array.from({ length: 4_000 }, (_, i) => ({
      gtin,
      serialNumber: `KB-${i}`,
      batchNumber: 'L1',
      metadata: { i },
    }));
    const idempotencyKey = `batch-${randomUUID()}`;
    const attempt = api(first.url, key, 'POST', '/code/generate/batch', { items }, { 'idempotency-key': idempotencyKey }).then(
      (answer) => ({ answer }),
      (error: unknown) => ({ error: String(error) }),
    );
    await waitFor(
      'the batch’s first codes',
      async () => ((await api(first.url, key, 'GET', '/codes?limit=1')).body.data?.length ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 20 },
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    await kill(first);
    const cut = await attempt;
    expect('error' in cut, JSON.stringify(cut).slice(0, 300)).toBe(true);

    const second = await startServer(dataDir, env);
    const madeBefore = (await listCodes(second.url, key)).length;
    const retry = await waitFor(
      'the keyed retry',
      async () => {
        const answer = await api(
          second.url,
          key,
          'POST',
          '/code/generate/batch',
          { items },
          { 'idempotency-key': idempotencyKey },
        );
        return answer.status === 409 ? undefined : answer;
      },
      { timeoutMs: 30_000, intervalMs: 300 },
    );
    const summary = `made before the kill ${madeBefore}`;
    console.log(`keyed batch: ${summary}`);
    expect(retry.status, `${summary} ${JSON.stringify(retry.body).slice(0, 500)}`).toBe(200);
    const errors = retry.body.results.filter((result: Json) => result.error);
    expect(errors.slice(0, 5), summary).toEqual([]);
    const codes = retry.body.results.map((result: Json) => result.code);
    expect(new Set(codes.map((code: Json) => code.assetId)).size).toBe(items.length);
    // The second retry replays the same answer.
    const replay = await api(second.url, key, 'POST', '/code/generate/batch', { items }, { 'idempotency-key': idempotencyKey });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.results.map((result: Json) => result.code?.assetId)).toEqual(codes.map((code: Json) => code.assetId));

    const listed = await listCodes(second.url, key);
    expect(listed.length, summary).toBe(items.length);
    const listedIds = new Set(listed.map((code) => code.assetId));
    expect(codes.filter((code: Json) => !listedIds.has(code.assetId)).length).toBe(0);
    const jwks = (await call<Json>(second.url, 'GET', '/.well-known/jwks.json')).body;
    const problems: string[] = [];
    const sample = listed.filter((_, i) => i % 20 === 0);
    await pool(sample, 16, async (code) => {
      const verdict = await api(second.url, key, 'POST', '/code/verify', { url: code.url });
      if (verdict.body.verdict !== 'AUTHENTIC') problems.push(`${code.serialNumber} ${verdict.body.verdict}`);
      const checked = await checkAsset(second.url, key, code.assetId, problems.length < 3 && Math.random() < 0.1, jwks);
      if (checked.eventCount !== 1) problems.push(`${code.assetId} has ${checked.eventCount} events`);
      problems.push(...checked.problems);
    });
    expect(problems, summary).toEqual([]);
    await kill(second);
  }, 120_000);

  it('keeps every scan answered COUNTERFEIT before the kill', async () => {
    const dataDir = await newDataDir();
    const first = await startServer(dataDir);
    const { key } = await tenant(first.url, dataDir);
    const code = ok(
      await api(first.url, key, 'POST', '/code/generate', { gtin, serialNumber: 'REAL-1', batchNumber: 'L1' }),
      201,
    );
    const forge = (serial: string) =>
      code.url
        .replace('/21/REAL-1', `/21/${serial}`)
        .replace(/sig=(.)/, (_: string, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);
    const counterfeit: string[] = [];
    const others: string[] = [];
    const genuine: { totalScans: number; at: number }[] = [];
    let stop = false;
    const workers = Array.from({ length: 16 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const serial = `F${w}-${i}`;
        try {
          if (w === 0) {
            const answer = await api(first.url, key, 'POST', '/code/verify', { url: code.url });
            if (answer.body.verdict) genuine.push({ totalScans: answer.body.metadata?.totalScans, at: Date.now() });
            continue;
          }
          const answer = await api(first.url, key, 'POST', '/code/verify', { url: forge(serial) });
          if (answer.status === 200 && answer.body.verdict === 'COUNTERFEIT') counterfeit.push(serial);
          else others.push(`${serial} ${answer.status} ${answer.body.verdict ?? answer.body.error?.code}`);
        } catch {
          return;
        }
      }
    });
    await waitFor('400 COUNTERFEIT answers', async () => (counterfeit.length >= 400 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 5,
    });
    await kill(first);
    const killedAt = Date.now();
    stop = true;
    await Promise.all(workers);

    const second = await startServer(dataDir);
    const stored = new Set<string>();
    let cursor: string | undefined;
    for (;;) {
      const page = ok(
        await api(
          second.url,
          key,
          'GET',
          `/scans?verdict=COUNTERFEIT&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        ),
      );
      for (const scan of page.scans) stored.add(scan.serial);
      cursor = page.nextCursor ?? page.pagination?.nextCursor ?? undefined;
      if (!cursor) break;
    }
    const missing = counterfeit.filter((serial) => !stored.has(serial));
    expect(missing, `answered COUNTERFEIT ${counterfeit.length}, stored ${stored.size}, others ${others.slice(0, 3)}`).toEqual(
      [],
    );
    // The genuine code's count: a crash loses at most the last 100 ms of counts (docs: Embedded durability).
    const lastCount = genuine.at(-1)?.totalScans ?? 0;
    const after = ok(await api(second.url, key, 'POST', '/code/verify', { url: code.url }));
    const countedLate = genuine.filter((scan) => scan.at > killedAt - 400).length;
    expect(
      lastCount + 1 - after.metadata.totalScans,
      `last ${lastCount}, after ${after.metadata.totalScans}, answered in the last 400 ms ${countedLate}`,
    ).toBeLessThanOrEqual(countedLate + 2);
    await kill(second);
  }, 120_000);

  it('keeps auction events and transfers all-or-nothing, the chains and trees agreeing, keyed confirms answered once', async () => {
    const dataDir = await newDataDir();
    const env = { HALLMARK_IDEMPOTENCY_LEASE_MS: '1500', HALLMARK_PUBLIC_RATE_LIMIT: '100000' };
    const first = await startServer(dataDir, env);
    const { key } = await tenant(first.url, dataDir, 'enterprise', false);
    const objects: { id: string; serial: string; owner: string }[] = [];
    for (let i = 0; i < 8; i++) {
      const registered = ok(
        await api(first.url, key, 'POST', '/auction/objects/register', {
          title: `Lot ${i}`,
          category: 'watch',
          ownerId: `owner-${i}-0`,
        }),
        201,
      );
      objects.push({ id: registered.object.id, serial: registered.object.service_serial, owner: `owner-${i}-0` });
    }
    interface Step {
      objectId: string;
      kind: 'event' | 'initiate' | 'confirm';
      idempotencyKey: string;
      body: Json;
      path: string;
      status?: number;
      answer?: Json;
    }
    const steps: Step[] = [];
    let stop = false;
    let acknowledgedWrites = 0;
    const send = async (step: Step) => {
      steps.push(step);
      const answer = await api(first.url, key, 'POST', step.path, step.body, { 'idempotency-key': step.idempotencyKey });
      step.status = answer.status;
      step.answer = answer.body;
      if (answer.status < 300) acknowledgedWrites++;
      return answer;
    };
    const workers = objects.map(async (object, o) => {
      try {
        for (let round = 1; !stop; round++) {
          await send({
            objectId: object.id,
            kind: 'event',
            idempotencyKey: randomUUID(),
            path: '/auction/provenance/events',
            body: { objectId: object.id, eventType: 'cataloged', actorRole: 'auction_house', description: `round ${round}` },
          });
          const buyer = `owner-${o}-${round}`;
          const started = await send({
            objectId: object.id,
            kind: 'initiate',
            idempotencyKey: randomUUID(),
            path: '/auction/transfers/initiate',
            body: {
              objectId: object.id,
              fromOwnerId: object.owner,
              toOwnerId: buyer,
              salePrice: 100 + round,
              saleCurrency: 'EUR',
            },
          });
          if (started.status !== 201) throw new Error(`initiate ${started.status} ${JSON.stringify(started.body)}`);
          const confirmed = await send({
            objectId: object.id,
            kind: 'confirm',
            idempotencyKey: randomUUID(),
            path: `/auction/transfers/${started.body.transferId}/confirm`,
            body: { transferCode: started.body.transferCode },
          });
          if (confirmed.status !== 200) throw new Error(`confirm ${confirmed.status} ${JSON.stringify(confirmed.body)}`);
          object.owner = buyer;
        }
      } catch (error) {
        if (!stop && !String(error).includes('fetch failed')) throw error;
      }
    });
    await waitFor('150 acknowledged auction writes', async () => (acknowledgedWrites >= 150 ? true : undefined), {
      timeoutMs: 40_000,
      intervalMs: 5,
    });
    await kill(first);
    stop = true;
    await Promise.all(workers);
    const refused = steps.filter((step) => step.status !== undefined && step.status >= 300);
    expect(refused.map((step) => `${step.kind} ${step.status} ${JSON.stringify(step.answer)}`)).toEqual([]);

    const second = await startServer(dataDir, env);
    // Every write cut off by the kill, retried with its key: answered 2xx, once.
    const cut = steps.filter((step) => step.status === undefined);
    const retryAnswers: string[] = [];
    for (const step of cut) {
      const answer = await waitFor(
        `the keyed retry of ${step.kind}`,
        async () => {
          const again = await api(second.url, key, 'POST', step.path, step.body, { 'idempotency-key': step.idempotencyKey });
          return again.status === 409 && again.body.error?.details?.retryAfterSeconds !== undefined ? undefined : again;
        },
        { timeoutMs: 20_000, intervalMs: 250 },
      );
      retryAnswers.push(`${step.kind} ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
      step.status = answer.status;
      step.answer = answer.body;
    }
    expect(
      cut.filter((step) => step.status !== 201 && step.status !== 200),
      retryAnswers.join('\n'),
    ).toEqual([]);
    // Every acknowledged step retried again: the same answer.
    for (const step of steps.filter((s) => s.kind !== 'event').slice(-6)) {
      const again = await api(second.url, key, 'POST', step.path, step.body, { 'idempotency-key': step.idempotencyKey });
      expect(again.status).toBe(step.status);
      expect(again.body).toEqual(step.answer);
    }

    const jwks = (await call<Json>(second.url, 'GET', '/.well-known/jwks.json')).body;
    const problems: string[] = [];
    for (const object of objects) {
      const history = ok(await api(second.url, key, 'GET', `/auction/objects/${object.id}/provenance`));
      const exported = (await settled(second.url, key, `/compliance/${object.id}/export?format=json`)).body;
      const events: Json[] = exported.events;
      if (object === objects[0]) console.log('export event shape', JSON.stringify(events.slice(0, 2)).slice(0, 800));
      const ids = new Set(events.map((event) => event.eventId ?? event.id));
      for (const step of steps.filter((s) => s.objectId === object.id && s.kind === 'event')) {
        if (!ids.has(step.answer?.eventId)) problems.push(`${object.id}: acknowledged event ${step.answer?.eventId} missing`);
      }
      const types = events.map((event) => String(event.eventType ?? event.type).replace(/^.*\./, ''));
      const completed = steps.filter((s) => s.objectId === object.id && s.kind === 'confirm' && s.status === 200).length;
      const sales = (history.chain_of_custody as Json[]).filter((entry) => entry.transfer_type === 'sale').length;
      if (sales !== completed)
        problems.push(`${object.id}: ${completed} confirms answered 200 but ${sales} sales in the custody chain`);
      const transferred = types.filter((type) => type === 'transferred').length;
      if (transferred !== completed)
        problems.push(
          `${object.id}: ${completed} confirms answered 200 but ${transferred} transferred events (${types.join(',')})`,
        );
      if (history.chain_valid !== true) problems.push(`${object.id}: chain_valid ${history.chain_valid}`);
      const checked = await checkAsset(second.url, key, object.id, true, jwks);
      problems.push(...checked.problems);
      if (checked.eventCount !== events.length)
        problems.push(`${object.id}: chain ${checked.eventCount} events, export ${events.length}`);
      const publicView = ok(await api(second.url, undefined, 'GET', `/auction/public/verify/${object.serial}`));
      if (publicView.provenance?.chain_intact !== true)
        problems.push(`${object.id}: public chain_intact ${JSON.stringify(publicView.provenance)}`);
      // The last completed sale's buyer owns it.
      const lastConfirm = steps.filter((s) => s.objectId === object.id && s.kind === 'confirm' && s.status === 200).at(-1);
      const buyer = steps.find((s) => s.kind === 'initiate' && s.answer?.transferId === lastConfirm?.answer?.transferId)?.body
        .toOwnerId;
      const owner = (history.chain_of_custody as Json[]).at(-1)?.to;
      if (buyer !== undefined && owner !== buyer) problems.push(`${object.id}: owner ${owner}, last confirmed buyer ${buyer}`);
    }
    console.log(`auction: steps ${steps.length}, cut ${cut.length}: ${retryAnswers.join(' | ')}`);
    expect(problems, `steps ${steps.length}, cut ${cut.length}`).toEqual([]);
    await kill(second);
  }, 120_000);

  it('counts a keyed batch’s quota after a kill: the keyed retry of a prepaid batch does not make a day’s quota free', async () => {
    // Starter tier: 1,000 codes a day. A keyed batch of the whole day's quota, the server killed just
    // after the quota was spent (in memory, written behind every 100 ms) and noted as prepaid on the
    // key (in PGlite at once). After the restart the keyed retry makes the codes and spends nothing.
    const dataDir = await newDataDir();
    const env = { HALLMARK_IDEMPOTENCY_LEASE_MS: '1000' };
    let server = await startServer(dataDir, env);
    const findings: string[] = [];
    const tries: string[] = [];
    for (const [round, delayMs] of [15, 60].entries()) {
      const ownGtin = gtinNumbered(round + 1);
      const { key } = await tenant(server.url, dataDir, 'starter', ownGtin);
      const items = Array.from({ length: 1_000 }, (_, i) => ({ gtin: ownGtin, serialNumber: `Q${delayMs}-${i}` }));
      const idempotencyKey = `quota-${randomUUID()}`;
      const attempt = api(server.url, key, 'POST', '/code/generate/batch', { items }, { 'idempotency-key': idempotencyKey }).then(
        (answer) => `answered ${answer.status}`,
        () => 'cut',
      );
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      await kill(server);
      const first = await attempt;
      server = await startServer(dataDir, env);
      const usedAfterRestart = (ok(await api(server.url, key, 'GET', '/usage')).quotas as Json[]).find(
        (q) => q.name === 'generate',
      )?.used;
      const retry = await waitFor(
        'the keyed retry',
        async () => {
          const answer = await api(
            server.url,
            key,
            'POST',
            '/code/generate/batch',
            { items },
            { 'idempotency-key': idempotencyKey },
          );
          return answer.status === 409 ? undefined : answer;
        },
        { timeoutMs: 20_000, intervalMs: 250 },
      );
      const made = retry.status === 200 ? retry.body.results.filter((result: Json) => result.code).length : 0;
      const listed = (await listCodes(server.url, key)).length;
      const used = (ok(await api(server.url, key, 'GET', '/usage')).quotas as Json[]).find((q) => q.name === 'generate')?.used;
      // What the tenant can still make today.
      const more = await api(server.url, key, 'POST', '/code/generate/batch', {
        items: Array.from({ length: 1_000 }, (_, i) => ({ gtin: ownGtin, serialNumber: `MORE${delayMs}-${i}` })),
      });
      const extra = more.status === 200 ? more.body.results.filter((result: Json) => result.code).length : 0;
      const line = `kill after ${delayMs} ms: first ${first}; used after restart ${usedAfterRestart}; retry ${retry.status} made ${made}; codes ${listed}; used ${used}; a further batch ${more.status} made ${extra}`;
      tries.push(line);
      if (listed + extra > 1_000 + 10) {
        findings.push(line);
        break;
      }
    }
    console.log(`quota after kills:\n${tries.join('\n')}`);
    expect(findings, tries.join('\n')).toEqual([]);
    await kill(server);
  }, 120_000);
});
