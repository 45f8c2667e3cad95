import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { verifyInclusion } from '@hallmark/merkle';
import { createPostgresDatabase } from '@hallmark/sql';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { type OwnedPostgres, type OwnedServer, startOwnNats, startOwnPostgres } from './servers.ts';

// The fault-injection suite (issue #17): a mixed load from many clients against the distributed
// form while services are killed and restarted and connections dropped; then every write the
// product acknowledged must be there exactly once, every chain and Merkle tree must check, and
// nothing may stay stuck. Used by test/e2e/faults.test.ts (short) and test/faults/run.ts (long).

const run = promisify(execFile);

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

/** The operator grants the tenant these (docs/SIGNING.md, Who may sign). */
export const faultGtins = ['09506000134352', '09506000134369', '09506000134376'] as const;

export interface Answer {
  status: number;
  body: Json;
  headers?: Headers;
}

/** One request; a connection cut off or refused is status 0. */
async function request(
  url: string,
  method: string,
  path: string,
  key: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  try {
    const response = await fetch(`${url}/api/v1${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    let parsed: Json = {};
    try {
      parsed = text ? (JSON.parse(text) as Json) : {};
    } catch {
      parsed = { text };
    }
    return { status: response.status, body: parsed, headers: response.headers };
  } catch (error) {
    return { status: 0, body: { error: { code: 'CUT_OFF', message: String(error) } } };
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the client knows of a write: acknowledged (2xx), or unknown (every attempt 5xx, cut off or refused as a repeat). */
type Outcome = 'acked' | 'unknown';

interface CodeWrite {
  gtin: string;
  serial: string;
  outcome: Outcome;
  url?: string;
  assetId?: string;
}
interface EventWrite {
  objectId: string;
  marker: string;
  outcome: Outcome;
  eventId?: string;
}
interface TransferWrite {
  objectId: string;
  transferId?: string;
  from: string;
  to: string;
  /** initiated: 201 to the initiate; completed: 200 to a confirm. */
  initiated: Outcome | 'refused';
  completed: Outcome | 'not-tried';
}
interface ObjectState {
  id: string;
  serial: string;
  owner: string;
  /** A transfer the client could not finish (its code lost with a cut-off answer): the object waits for its expiry. */
  held: boolean;
}

export interface FaultFigures {
  fault: string;
  /** From the fault to the first moment every service answered a ping and a code was generated and verified. */
  recoverMs: number;
}

export interface SuiteOptions {
  clients: number;
  /** How long the load runs before the first fault and after the last. */
  settleMs: number;
  /** Each fault this many times. */
  rounds: number;
  /** Items per batch. */
  batchSize: number;
  /** A service that does not answer again within this is a failure. */
  recoverBoundMs: number;
  /** How long a client retries a write (with its Idempotency-Key) before it gives up: longer than the gateway's idempotency lease. */
  retryForMs: number;
  log?: (line: string) => void;
}

export interface SuiteReport {
  writesAcknowledged: { codes: number; events: number; transfers: number; total: number };
  writesUnknown: number;
  lost: string[];
  duplicates: string[];
  problems: string[];
  recoveries: FaultFigures[];
  /** Answers 500 and other 5xx but 503 (a 503 is what an unreachable service should answer). */
  serverErrors: string[];
  requests: number;
  byStatus: Record<string, number>;
  durationMs: number;
}

export interface FaultEnvironment {
  product: DistributedProduct;
  nats: OwnedServer;
  postgres: OwnedPostgres;
  database: string;
  stop(): Promise<void>;
}

/** The gateway's idempotency lease in the suite's product; clients retry for longer than this. */
export const idempotencyLeaseMs = 10_000;

/** The distributed form on a nats-server and a PostgreSQL cluster of this run's own, and the machine's Redis. */
export async function startFaultEnvironment(): Promise<FaultEnvironment> {
  const nats = await startOwnNats();
  const postgres = await startOwnPostgres().catch(async (error) => {
    await nats.stop();
    throw error;
  });
  const database = `hallmark_faults_${randomBytes(4).toString('hex')}`;
  try {
    const databaseUrl = await postgres.createDatabase(database);
    const product = await startDistributedProduct({
      HALLMARK_NATS_URL: nats.url,
      HALLMARK_DATABASE_URL: databaseUrl,
      // A request cut off by a kill answers 503 after this; short, so clients retry soon.
      HALLMARK_REQUEST_TIMEOUT_MS: '3000',
      // A claim left by an attempt a kill cut off lapses after this (longer than the request timeout).
      HALLMARK_IDEMPOTENCY_LEASE_MS: String(idempotencyLeaseMs),
      HALLMARK_LOG_LEVEL: 'error',
      HALLMARK_ENVIRONMENT: 'test',
    });
    return {
      product,
      nats,
      postgres,
      database,
      async stop() {
        await product.stop().catch(() => {});
        await postgres.stop();
        await nats.stop();
      },
    };
  } catch (error) {
    await postgres.stop();
    await nats.stop();
    throw error;
  }
}

/** CLIENT KILL of every Redis connection named for this namespace (packages/cache sets `<namespace>:<service>`). */
export async function killRedisClients(redisUrl: string, namespace: string): Promise<number> {
  const { stdout } = await run('redis-cli', ['-u', redisUrl, 'CLIENT', 'LIST']);
  const ids = stdout
    .split('\n')
    .filter((line) => new RegExp(` name=${namespace}:`).test(line))
    .map((line) => /^id=(\d+)/.exec(line)?.[1])
    .filter((id): id is string => Boolean(id));
  for (const id of ids) await run('redis-cli', ['-u', redisUrl, 'CLIENT', 'KILL', 'ID', id]);
  return ids.length;
}

export async function runFaultSuite(env: FaultEnvironment, options: SuiteOptions): Promise<SuiteReport> {
  const log = options.log ?? (() => {});
  const { product } = env;
  const url = product.url;
  const operator = product.operatorKey;
  const redisUrl = process.env.HALLMARK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const began = Date.now();
  const byStatus: Record<string, number> = {};
  let requests = 0;
  const serverErrors: string[] = [];
  const api = async (method: string, path: string, key: string, body?: unknown, headers?: Record<string, string>) => {
    const answer = await request(url, method, path, key, body, headers);
    requests += 1;
    const route = `${method} ${path.replace(/\/(obj|trf|code)_[^/]+|[0-9a-f-]{36}/g, '/:id')}`;
    const label = `${answer.status} ${route}`;
    byStatus[label] = (byStatus[label] ?? 0) + 1;
    if (answer.status >= 500 && answer.status !== 503)
      serverErrors.push(`${label} ${JSON.stringify(answer.body).slice(0, 300)} at ${new Date().toISOString()}`);
    return answer;
  };

  // The tenant: an enterprise account granted the suite's GTINs by the operator.
  const account = await api('POST', '/accounts', operator, { name: 'Maison Faults', tier: 'enterprise' });
  if (account.status !== 201) throw new Error(`account: ${account.status} ${JSON.stringify(account.body)}`);
  const tenant = account.body.apiKey.secret as string;
  const accountId = account.body.account.id as string;
  for (const gtin of faultGtins) {
    const granted = await api('POST', `/accounts/${accountId}/gtins`, operator, { gtin });
    if (granted.status !== 201 && granted.status !== 200)
      throw new Error(`grant ${gtin}: ${granted.status} ${JSON.stringify(granted.body)}`);
  }

  const codes: CodeWrite[] = [];
  const events: EventWrite[] = [];
  const transfers: TransferWrite[] = [];
  const objects: ObjectState[] = [];
  const problems: string[] = [];

  /**
   * A write with an Idempotency-Key, retried with the same key while the answer is a 5xx, a cut-off
   * connection or 409 "still running" (as a careful client would), for up to 30 s.
   */
  async function write(method: string, path: string, body: unknown, idempotent = true): Promise<Answer & { attempts: number }> {
    const headers: Record<string, string> = idempotent ? { 'idempotency-key': randomUUID() } : {};
    const deadline = Date.now() + options.retryForMs;
    let attempts = 0;
    for (;;) {
      attempts += 1;
      const answer = await api(method, path, tenant, body, headers);
      const retry =
        answer.status === 0 ||
        answer.status >= 500 ||
        answer.status === 429 ||
        (answer.status === 409 && idempotent && answer.headers?.get('retry-after') !== null && answer.headers !== undefined);
      if (!retry || Date.now() > deadline) return { ...answer, attempts };
      await sleep(200 + Math.random() * 300);
    }
  }

  let serialCounter = 0;
  const nextSerial = (client: number) => `F${client}x${(serialCounter++).toString(36)}${randomBytes(2).toString('hex')}`;

  async function generate(client: number) {
    const gtin = faultGtins[client % faultGtins.length] as string;
    const serial = nextSerial(client);
    const answer = await write('POST', '/code/generate', { gtin, serialNumber: serial, metadata: { name: 'Fault lot' } });
    if (answer.status === 201) codes.push({ gtin, serial, outcome: 'acked', url: answer.body.url, assetId: answer.body.assetId });
    else if (answer.status === 0 || answer.status >= 500 || answer.body.error?.code === 'DUPLICATE_SERIAL')
      // DUPLICATE_SERIAL to a retry: an earlier attempt stored it and its answer was lost.
      codes.push({ gtin, serial, outcome: 'unknown' });
    else problems.push(`generate ${serial}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
  }

  async function batch(client: number) {
    const gtin = faultGtins[client % faultGtins.length] as string;
    const items = Array.from({ length: options.batchSize }, () => ({ gtin, serialNumber: nextSerial(client) }));
    const answer = await write('POST', '/code/generate/batch', { items });
    if (answer.status === 200) {
      for (const result of answer.body.results as Json[]) {
        const item = items[result.index] as { serialNumber: string };
        if (result.code)
          codes.push({ gtin, serial: item.serialNumber, outcome: 'acked', url: result.code.url, assetId: result.code.assetId });
        else if (result.error?.code === 'DUPLICATE_SERIAL' || result.error?.code === 'SERVICE_UNAVAILABLE')
          codes.push({ gtin, serial: item.serialNumber, outcome: 'unknown' });
        else problems.push(`batch item ${item.serialNumber}: ${JSON.stringify(result.error)}`);
      }
    } else if (answer.status === 0 || answer.status >= 500) {
      for (const item of items) codes.push({ gtin, serial: item.serialNumber, outcome: 'unknown' });
    } else problems.push(`batch: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
  }

  async function verify() {
    const acked = codes.filter((code) => code.outcome === 'acked');
    const code = acked[Math.floor(Math.random() * acked.length)];
    if (!code) return;
    const answer = await api('POST', '/code/verify', tenant, { url: code.url });
    if (answer.status === 200 && answer.body.verdict === 'COUNTERFEIT')
      problems.push(`verify ${code.serial}: COUNTERFEIT for an acknowledged code ${JSON.stringify(answer.body).slice(0, 300)}`);
  }

  async function provenanceEvent(object: ObjectState) {
    const marker = `fault-${randomUUID()}`;
    const answer = await write('POST', '/auction/provenance/events', {
      objectId: object.id,
      eventType: 'exhibited',
      actorRole: 'auction_house',
      description: marker,
    });
    if (answer.status === 201) events.push({ objectId: object.id, marker, outcome: 'acked', eventId: answer.body.eventId });
    else if (answer.status === 0 || answer.status >= 500) events.push({ objectId: object.id, marker, outcome: 'unknown' });
    else problems.push(`event on ${object.id}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
  }

  async function transfer(object: ObjectState, client: number) {
    if (object.held) return;
    const to = `buyer-${client}-${randomBytes(3).toString('hex')}`;
    const entry: TransferWrite = { objectId: object.id, from: object.owner, to, initiated: 'unknown', completed: 'not-tried' };
    transfers.push(entry);
    const started = await write('POST', '/auction/transfers/initiate', {
      objectId: object.id,
      fromOwnerId: object.owner,
      toOwnerId: to,
      salePrice: 1000,
      saleCurrency: 'EUR',
    });
    if (started.status !== 201) {
      if (started.status === 409) {
        // A pending transfer whose code this client never saw (its answer was cut off and the
        // retry ran again): only expiry frees the object (72 h).
        entry.initiated = 'refused';
        object.held = true;
      } else if (started.status === 0 || started.status >= 500) object.held = true;
      else problems.push(`initiate on ${object.id}: ${started.status} ${JSON.stringify(started.body).slice(0, 300)}`);
      return;
    }
    entry.initiated = 'acked';
    entry.transferId = started.body.transferId;
    const confirmed = await write(
      'POST',
      `/auction/transfers/${started.body.transferId}/confirm`,
      { transferCode: started.body.transferCode },
      false,
    );
    if (confirmed.status === 200) {
      entry.completed = 'acked';
      object.owner = to;
    } else if (confirmed.status === 409 && confirmed.body.error?.details?.status === 'completed') {
      // An earlier attempt completed it; its answer was lost.
      entry.completed = 'unknown';
      object.owner = to;
    } else {
      entry.completed = 'unknown';
      problems.push(`confirm ${started.body.transferId}: ${confirmed.status} ${JSON.stringify(confirmed.body).slice(0, 300)}`);
      object.held = true;
    }
  }

  // One object per client, registered before the load.
  for (let client = 0; client < options.clients; client += 1) {
    const registered = await write('POST', '/auction/objects/register', {
      title: `Fault lot ${client}`,
      category: 'watch',
      ownerId: `consignor-${client}`,
    });
    if (registered.status !== 201) throw new Error(`register: ${registered.status} ${JSON.stringify(registered.body)}`);
    objects.push({
      id: registered.body.object.id,
      serial: registered.body.object.service_serial,
      owner: `consignor-${client}`,
      held: false,
    });
  }

  let loadRunning = true;
  const clientLoop = async (client: number) => {
    const object = objects[client] as ObjectState;
    while (loadRunning) {
      const roll = Math.random();
      if (roll < 0.3) await verify();
      else if (roll < 0.55) await generate(client);
      else if (roll < 0.65) await batch(client);
      else if (roll < 0.9) await provenanceEvent(object);
      else await transfer(object, client);
    }
  };
  const load = Promise.all(Array.from({ length: options.clients }, (_, client) => clientLoop(client)));

  /** Every service answers, and a code can be generated (operator: no client quota) and verified. */
  async function healthy(): Promise<boolean> {
    for (const service of ['code-service', 'verify-service', 'auction-service', 'compliance-service']) {
      const ping = await request(url, 'POST', `/system/ping/${service}`, operator, {});
      if (ping.status !== 200) return false;
    }
    const generated = await request(url, 'POST', '/code/generate', tenant, {
      gtin: faultGtins[0],
      serialNumber: `probe${randomBytes(4).toString('hex')}`,
    });
    if (generated.status !== 201) return false;
    codes.push({
      gtin: faultGtins[0],
      serial: generated.body.serial,
      outcome: 'acked',
      url: generated.body.url,
      assetId: generated.body.assetId,
    });
    const verified = await request(url, 'POST', '/code/verify', tenant, { url: generated.body.url });
    return verified.status === 200;
  }

  const recoveries: FaultFigures[] = [];
  async function measure(fault: string, inject: () => Promise<void>) {
    const at = Date.now();
    log(`${new Date(at).toISOString()} ${fault}`);
    await inject();
    for (;;) {
      if (await healthy().catch(() => false)) break;
      if (Date.now() - at > options.recoverBoundMs) {
        problems.push(`${fault}: not recovered within ${options.recoverBoundMs} ms`);
        break;
      }
      await sleep(100);
    }
    const recoverMs = Date.now() - at;
    recoveries.push({ fault, recoverMs });
    log(`${fault}: recovered in ${recoverMs} ms (${requests} requests so far)`);
    await sleep(options.settleMs / 2);
  }

  const services = product.processNames();
  const faults: Array<[string, () => Promise<void>]> = [
    ...services.map((name): [string, () => Promise<void>] => [
      `kill -9 ${name}`,
      async () => {
        await product.kill(name, 'SIGKILL');
        await product.restart(name);
      },
    ]),
    [
      'PostgreSQL: every connection of the test database terminated',
      async () => {
        const terminated = await env.postgres.terminateBackends(env.database);
        log(`terminated ${terminated} PostgreSQL connections`);
      },
    ],
    [
      'Redis: every connection of the namespace killed (CLIENT KILL)',
      async () => {
        const killed = await killRedisClients(redisUrl, product.namespace);
        log(`killed ${killed} Redis connections`);
        if (killed === 0) problems.push('no Redis connection carried the namespace name');
      },
    ],
    ['NATS server restarted (SIGKILL, same port and store)', () => env.nats.restart()],
    ['PostgreSQL cluster restarted (immediate shutdown)', () => env.postgres.restart()],
  ];

  try {
    await sleep(options.settleMs);
    for (let round = 0; round < options.rounds; round += 1) {
      for (const [name, inject] of faults) await measure(round === 0 ? name : `${name} (round ${round + 1})`, inject);
    }
    await sleep(options.settleMs);
  } finally {
    loadRunning = false;
    await load;
  }

  // Every process still runs (none crashed on a dropped connection).
  for (const name of product.processNames()) {
    // The first few error lines of each process, to say why a request failed.
    const errors = product
      .process(name)
      .lines.filter(
        (line) => (typeof line.level === 'number' && line.level >= 50) || line.level === 'error' || line.level === 'fatal',
      );
    if (errors.length > 5) log(`${name} logged ${errors.length} errors; the first 5:`);
    for (const line of errors.slice(0, 5)) {
      const { time, msg, subject, err } = line as {
        time?: unknown;
        msg?: unknown;
        subject?: unknown;
        err?: { message?: unknown };
      };
      log(`${name} logged: ${JSON.stringify({ time, msg, subject, err: err?.message })}`);
    }
    const child = product.process(name).child;
    if (child.exitCode !== null || child.signalCode !== null)
      problems.push(`${name} exited (${child.exitCode ?? child.signalCode}) during the run`);
  }

  const lost: string[] = [];
  const duplicates: string[] = [];
  await checkEverything();

  const ackedCodes = codes.filter((code) => code.outcome === 'acked').length;
  const ackedEvents = events.filter((event) => event.outcome === 'acked').length;
  const ackedTransfers = transfers.filter((entry) => entry.completed === 'acked').length;
  return {
    writesAcknowledged: {
      codes: ackedCodes,
      events: ackedEvents,
      transfers: ackedTransfers,
      total: ackedCodes + ackedEvents + ackedTransfers,
    },
    writesUnknown:
      codes.length - ackedCodes + events.length - ackedEvents + transfers.filter((entry) => entry.completed === 'unknown').length,
    lost,
    duplicates,
    problems,
    recoveries,
    serverErrors,
    requests,
    byStatus,
    durationMs: Date.now() - began,
  };

  async function checkEverything() {
    const db = createPostgresDatabase({ connectionString: product.databaseUrl, applicationName: 'hallmark-faults-check' });
    try {
      // Codes: no serial stored twice, no code.generated event twice; every acknowledged one present.
      const rows = await db.query<{ gtin: string; serial: string; n: string }>(
        'SELECT gtin, serial, count(*) AS n FROM codes GROUP BY gtin, serial',
      );
      const stored = new Map(rows.map((row) => [`${row.gtin}/${row.serial}`, Number(row.n)]));
      const generatedEvents = await db.query<{ serial: string; n: string }>(
        `SELECT (data->>'gtin') || '/' || (data->>'serial') AS serial, count(*) AS n FROM event_log
          WHERE event_type = 'code.generated' GROUP BY 1`,
      );
      for (const row of generatedEvents) if (Number(row.n) > 1) duplicates.push(`code.generated ${row.serial} × ${row.n}`);
      for (const code of codes) {
        const n = stored.get(`${code.gtin}/${code.serial}`) ?? 0;
        if (n > 1) duplicates.push(`code ${code.serial} stored ${n} times`);
        if (code.outcome === 'acked' && n !== 1) lost.push(`code ${code.serial} (acknowledged) stored ${n} times`);
      }
    } finally {
      await db.close();
    }

    // Through the API: a sample of acknowledged codes verify and prove (all of them in small runs).
    const ackedCodes = codes.filter((code) => code.outcome === 'acked');
    const sample =
      ackedCodes.length <= 60 ? ackedCodes : ackedCodes.filter((_, index) => index % Math.ceil(ackedCodes.length / 60) === 0);
    for (const code of sample) {
      const verified = await api('POST', '/code/verify', tenant, { url: code.url });
      if (verified.status !== 200 || verified.body.verdict === 'COUNTERFEIT')
        lost.push(
          `code ${code.serial}: verify ${verified.status} ${verified.body.verdict ?? JSON.stringify(verified.body.error)}`,
        );
      await checkAsset(code.assetId as string, (exported) => {
        const generated = exported.events.filter((event: Json) => event.type === 'code.generated');
        if (generated.length !== 1)
          (generated.length ? duplicates : lost).push(`code ${code.serial}: ${generated.length} code.generated events`);
      });
    }

    // Objects: each acknowledged event once, no marker twice, each completed transfer once, and a new transfer can start.
    for (const object of objects) {
      await checkAsset(object.id, (exported) => {
        const markers = new Map<string, number>();
        const transferred = new Map<string, number>();
        for (const event of exported.events as Json[]) {
          const description = event.data?.description;
          if (typeof description === 'string' && description.startsWith('fault-'))
            markers.set(description, (markers.get(description) ?? 0) + 1);
          if (String(event.type).endsWith('transferred') && event.data?.transferId)
            transferred.set(event.data.transferId, (transferred.get(event.data.transferId) ?? 0) + 1);
        }
        const ids = new Set((exported.events as Json[]).map((event) => event.eventId));
        for (const [marker, n] of markers) if (n > 1) duplicates.push(`event ${marker} on ${object.id} × ${n}`);
        for (const event of events.filter((entry) => entry.objectId === object.id)) {
          if (event.outcome !== 'acked') continue;
          if (!ids.has(event.eventId)) lost.push(`event ${event.eventId} (${event.marker}) missing from ${object.id}`);
          // Twice is counted as a duplicate above; here only missing.
          if ((markers.get(event.marker) ?? 0) === 0) lost.push(`event ${event.marker} on ${object.id}: not in the history`);
        }
        for (const [transferId, n] of transferred) if (n > 1) duplicates.push(`transfer ${transferId} transferred × ${n}`);
        for (const entry of transfers.filter((item) => item.objectId === object.id)) {
          if (entry.completed === 'acked' && transferred.get(entry.transferId as string) !== 1)
            lost.push(`transfer ${entry.transferId}: ${transferred.get(entry.transferId as string) ?? 0} transferred events`);
        }
      });
      if (!object.held) {
        const next = await write('POST', '/auction/transfers/initiate', {
          objectId: object.id,
          fromOwnerId: object.owner,
          toOwnerId: `final-${randomBytes(3).toString('hex')}`,
          salePrice: 1,
          saleCurrency: 'EUR',
        });
        if (next.status !== 201)
          problems.push(
            `stuck: a new transfer of ${object.id} from ${object.owner}: ${next.status} ${JSON.stringify(next.body).slice(0, 300)}`,
          );
      }
    }
  }

  /** The chain verifies, the Merkle tree holds every event (waits for the projection) and every proof checks. */
  async function checkAsset(assetId: string, more: (exported: Json) => void) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const chain = await api('GET', `/compliance/${assetId}/verify`, tenant);
      const exported = await api('GET', `/compliance/${assetId}/export`, tenant);
      const ready =
        chain.status === 200 &&
        exported.status === 200 &&
        exported.body.treeSize === chain.body.eventCount &&
        exported.body.events?.length === chain.body.eventCount;
      if (!ready && Date.now() < deadline) {
        await sleep(200);
        continue;
      }
      if (chain.status !== 200 || !chain.body.isValid) {
        problems.push(`chain of ${assetId}: ${chain.status} ${JSON.stringify(chain.body).slice(0, 300)}`);
        return;
      }
      if (!ready) {
        problems.push(
          `Merkle tree of ${assetId}: treeSize ${exported.body.treeSize}, events ${exported.body.events?.length}, chain ${chain.body.eventCount}`,
        );
        return;
      }
      const root = Buffer.from(exported.body.rootHash, 'hex');
      for (const event of exported.body.events as Json[]) {
        const proof = (event.auditPath as string[]).map((hex) => Buffer.from(hex, 'hex'));
        if (!verifyInclusion(event.leafIndex, exported.body.treeSize, Buffer.from(event.leafHash, 'hex'), proof, root))
          problems.push(`proof of ${event.eventId} in ${assetId} does not verify`);
      }
      more(exported.body);
      return;
    }
  }
}

/** The figures as lines of text (for the console and docs/RELIABILITY.md). */
export function describeReport(report: SuiteReport): string[] {
  return [
    `requests: ${report.requests} in ${(report.durationMs / 1000).toFixed(0)} s; by answer and route:`,
    ...Object.entries(report.byStatus)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([label, n]) => `  ${label}: ${n}`),
    `writes acknowledged: ${report.writesAcknowledged.total} (codes ${report.writesAcknowledged.codes}, provenance events ${report.writesAcknowledged.events}, transfers completed ${report.writesAcknowledged.transfers}); unknown (5xx or cut off): ${report.writesUnknown}`,
    `writes lost: ${report.lost.length}; duplicates: ${report.duplicates.length}; other problems: ${report.problems.length}`,
    ...report.recoveries.map((entry) => `  ${entry.fault}: recovered in ${entry.recoverMs} ms`),
    ...report.lost.map((entry) => `LOST ${entry}`),
    ...report.duplicates.map((entry) => `DUPLICATE ${entry}`),
    ...report.problems.map((entry) => `PROBLEM ${entry}`),
    ...report.serverErrors.map((entry) => `5xx ${entry}`),
  ];
}
