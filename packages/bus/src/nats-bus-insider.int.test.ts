import { randomBytes, randomUUID } from 'node:crypto';
import { jetstream } from '@nats-io/jetstream';
import { connect, headers, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import type { Bus, BusEvent } from './bus.ts';
import { createNatsBus, deleteNamespaceStreams } from './nats-bus.ts';
import { createRequestSigner, type RefusedMessageKind, type SignatureRefusal } from './request-signature.ts';

// An insider on the bus: a client of NATS without the bus secret. Signed requests keep it from
// having work done (nats-bus.int.test.ts); here it answers requests before the service does, sends
// a reply it copied from an earlier request, and publishes events, on this machine's nats-server.

const servers = process.env.HALLMARK_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

interface Setup {
  prefix: string;
  secret: Buffer;
  refused: Array<{ kind: RefusedMessageKind; reason: SignatureRefusal }>;
  buses: Bus[];
  insider: NatsConnection;
}
let setup: Setup | undefined;

async function start(): Promise<Setup> {
  setup = {
    prefix: `test_${randomUUID().slice(0, 8)}`,
    secret: randomBytes(32),
    refused: [],
    buses: [],
    insider: await connect({ servers, name: 'insider' }),
  };
  return setup;
}

async function bus(options: { signed?: boolean; acceptUnsigned?: boolean } = {}): Promise<Bus> {
  const current = setup as Setup;
  const created = await createNatsBus({
    servers,
    name: 'bus-test-insider',
    prefix: current.prefix,
    ...(options.signed === false ? {} : { signer: createRequestSigner(current.secret) }),
    ...(options.acceptUnsigned ? { acceptUnsigned: true } : {}),
    onRefusedRequest: ({ kind, reason }) => current.refused.push({ kind, reason }),
  });
  current.buses.push(created);
  return created;
}

afterEach(async () => {
  if (!setup) return;
  const { insider, buses, prefix } = setup;
  setup = undefined;
  await insider.close();
  await Promise.all(buses.map((created) => created.drain()));
  await deleteNamespaceStreams(servers, prefix);
});

/** The verify service: slower than the insider, as a real one reading its database would be. */
async function serveVerdicts(server: Bus) {
  await server.serve('rpc.verify-service.verify', { queue: 'verify-service' }, async (payload) => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const { serial } = payload as { serial: string };
    return { verdict: serial.startsWith('FAKE') ? 'COUNTERFEIT' : 'AUTHENTIC', serial };
  });
}

describe('replies on NATS, with an insider answering first', () => {
  it('takes the service’s verdict, not the insider’s made-up one, and says the made-up one was dropped', async () => {
    const { prefix, insider, refused } = await start();
    const server = await bus();
    const caller = await bus();
    await serveVerdicts(server);
    // Beside the queue group, the insider answers every request at once: AUTHENTIC.
    insider.subscribe(`${prefix}.rpc.verify-service.verify`, {
      callback: (_error, message) => {
        message.respond(encode({ ok: true, value: { verdict: 'AUTHENTIC', serial: 'FAKE-1' } }));
      },
    });
    await insider.flush();
    const answer = await caller.request('rpc.verify-service.verify', { serial: 'FAKE-1' }, { timeoutMs: 3_000 });
    expect(answer).toEqual({ ok: true, value: { verdict: 'COUNTERFEIT', serial: 'FAKE-1' } });
    expect(refused).toEqual([{ kind: 'reply', reason: 'missing' }]);
  });

  it('drops a signed reply the insider copied from an earlier request, even one with the same id and payload', async () => {
    const { prefix, insider, refused } = await start();
    const server = await bus();
    const caller = await bus();
    await serveVerdicts(server);
    // The insider sees every reply (this NATS has no users) and keeps the service's answer to a
    // genuine item (this test's own serial: other files' replies pass by on this server too).
    const serial = `SN-${randomUUID()}`;
    const copied = new Promise<Msg>((resolve) => {
      const subscription = insider.subscribe('_INBOX.>', {
        callback: (_error, message) => {
          if (!new TextDecoder().decode(message.data).includes(serial)) return;
          subscription.unsubscribe();
          resolve(message);
        },
      });
    });
    await insider.flush();
    const genuine = await caller.request('rpc.verify-service.verify', { serial }, { requestId: 'req-1' });
    expect(genuine).toEqual({ ok: true, value: { verdict: 'AUTHENTIC', serial } });
    const reply = await copied;
    expect(reply.headers?.get('hallmark-signature')).toMatch(/^1\./);

    // Then it answers later requests with that copy, signature and all, before the service does.
    insider.subscribe(`${prefix}.rpc.verify-service.verify`, {
      callback: (_error, message) => {
        message.respond(reply.data, { headers: reply.headers });
      },
    });
    await insider.flush();
    await new Promise((resolve) => setTimeout(resolve, 5)); // another millisecond: another request signature
    const again = await caller.request('rpc.verify-service.verify', { serial }, { requestId: 'req-1' });
    expect(again).toEqual({ ok: true, value: { verdict: 'AUTHENTIC', serial } });
    const fake = await caller.request('rpc.verify-service.verify', { serial: 'FAKE-2' });
    expect(fake).toEqual({ ok: true, value: { verdict: 'COUNTERFEIT', serial: 'FAKE-2' } });
    expect(refused).toEqual([
      { kind: 'reply', reason: 'mismatch' },
      { kind: 'reply', reason: 'mismatch' },
    ]);
  });

  it('drops a made-up part of a reply in parts, and puts the service’s parts together', async () => {
    const { prefix, insider, refused } = await start();
    const server = await bus();
    const caller = await bus();
    const large = 'x'.repeat(2_500_000); // three messages at the server's default 1 MB
    await server.serve('rpc.auction-service.history', { queue: 'auction-service' }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return large;
    });
    insider.subscribe(`${prefix}.rpc.auction-service.history`, {
      callback: (_error, message) => {
        const part = headers();
        part.set('hallmark-reply-part', '0/2');
        if (message.reply) insider.publish(message.reply, encode('forged'), { headers: part });
      },
    });
    await insider.flush();
    const answer = await caller.request('rpc.auction-service.history', {}, { timeoutMs: 5_000 });
    // Its length, not the value: a failure would print 2.5 MB.
    expect(answer.ok ? (answer.value as string).length : answer).toBe(large.length);
    expect(answer.ok && answer.value === large).toBe(true);
    expect(refused).toEqual([{ kind: 'reply', reason: 'missing' }]);
  });

  it('takes an unsigned refusal as a refusal, in its own words: a caller with another secret learns why at once', async () => {
    const { prefix, insider } = await start();
    const server = await bus();
    await serveVerdicts(server);
    const foreign = await createNatsBus({
      servers,
      name: 'bus-test-foreign',
      prefix,
      signer: createRequestSigner(randomBytes(32)),
    });
    (setup as Setup).buses.push(foreign);
    const started = Date.now();
    const answer = await foreign.request('rpc.verify-service.verify', { serial: 'SN-1' }, { timeoutMs: 5_000 });
    expect(answer).toMatchObject({ ok: false, error: { code: 'SERVICE_UNAVAILABLE', details: { reason: 'refused' } } });
    expect(Date.now() - started).toBeLessThan(2_000);

    // A refusal the insider makes up ends the request as refused too (as a made-up "no responders"
    // would), with the bus's own text, not the insider's.
    const caller = await bus();
    insider.subscribe(`${prefix}.rpc.verify-service.verify`, {
      callback: (_error, message) =>
        void message.respond(
          encode({
            ok: false,
            error: { code: 'SERVICE_UNAVAILABLE', message: 'Call +1 555 0100', details: { reason: 'refused' } },
          }),
        ),
    });
    await insider.flush();
    const refusedAnswer = await caller.request('rpc.verify-service.verify', { serial: 'SN-1' });
    expect(refusedAnswer.ok).toBe(false);
    if (!refusedAnswer.ok) expect(refusedAnswer.error.message).not.toContain('555');
  });

  it('during a rolling update (acceptUnsigned) takes the replies of a service that does not sign, never a wrongly signed one', async () => {
    const { prefix, insider, refused } = await start();
    const oldServer = await bus({ signed: false });
    await serveVerdicts(oldServer);
    const strict = await bus();
    expect(await strict.request('rpc.verify-service.verify', { serial: 'SN-1' }, { timeoutMs: 500 })).toMatchObject({
      ok: false,
      error: { code: 'SERVICE_UNAVAILABLE', details: { reason: 'timeout' } },
    });
    const rolling = await bus({ acceptUnsigned: true });
    expect(await rolling.request('rpc.verify-service.verify', { serial: 'SN-1' })).toEqual({
      ok: true,
      value: { verdict: 'AUTHENTIC', serial: 'SN-1' },
    });
    insider.subscribe(`${prefix}.rpc.verify-service.verify`, {
      callback: (_error, message) => {
        const signed = headers();
        signed.set('hallmark-signature', `1.${randomBytes(32).toString('base64url')}`);
        message.respond(encode({ ok: true, value: { verdict: 'AUTHENTIC', serial: 'FAKE-3' } }), { headers: signed });
      },
    });
    await insider.flush();
    expect(await rolling.request('rpc.verify-service.verify', { serial: 'FAKE-3' })).toEqual({
      ok: true,
      value: { verdict: 'COUNTERFEIT', serial: 'FAKE-3' },
    });
    expect(refused).toEqual([
      { kind: 'reply', reason: 'missing' },
      { kind: 'reply', reason: 'mismatch' },
    ]);
  });
});

describe('events on NATS, with an insider publishing', () => {
  /** Events handed to a durable consumer of `scans.>` until `until` is among them. */
  async function consumeUntil(consumer: Bus, until: (event: BusEvent) => boolean): Promise<BusEvent[]> {
    const seen: BusEvent[] = [];
    let done: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    const subscription = await consumer.consumeEvents({
      durable: 'scan-history',
      subject: 'scans.>',
      async handle(event) {
        seen.push(event);
        if (until(event)) done();
      },
    });
    await finished;
    await subscription.stop();
    return seen;
  }

  it('hands a consumer only the events a holder of the secret published, each once', async () => {
    const { prefix, insider, refused } = await start();
    const publisher = await bus();
    const consumer = await bus();
    const js = jetstream(insider);
    // Before, between and after the genuine events: made up, unsigned or wrongly signed, and one
    // genuine event copied onto another subject (its signature covers its subject).
    await js.publish(`${prefix}.events.scans.recorded`, encode({ scans: [{ verdict: 'COUNTERFEIT', serial: 'FORGED-1' }] }));
    await publisher.publishEvent(
      'scans.recorded',
      { scans: [{ verdict: 'AUTHENTIC', serial: 'SN-1' }] },
      { messageId: 'scan-1' },
    );
    const wrong = headers();
    wrong.set('hallmark-signature', `1.${randomBytes(32).toString('base64url')}`);
    await js.publish(`${prefix}.events.scans.recorded`, encode({ scans: [{ verdict: 'COUNTERFEIT', serial: 'FORGED-2' }] }), {
      headers: wrong,
    });
    const copiedMessage = new Promise<Msg>((resolve) => {
      insider.subscribe(`${prefix}.events.scans.recorded`, { max: 1, callback: (_error, message) => resolve(message) });
    });
    await insider.flush();
    await publisher.publishEvent('scans.recorded', { scans: [{ serial: 'SN-2' }] });
    const copied = await copiedMessage;
    await js.publish(`${prefix}.events.scans.suspicious`, copied.data, { headers: copied.headers });
    await publisher.publishEvent('scans.recorded', { scans: [{ serial: 'LAST' }] });

    const seen = await consumeUntil(consumer, (event) => JSON.stringify(event.payload).includes('LAST'));
    expect(seen.map((event) => event.payload)).toEqual([
      { scans: [{ verdict: 'AUTHENTIC', serial: 'SN-1' }] },
      { scans: [{ serial: 'SN-2' }] },
      { scans: [{ serial: 'LAST' }] },
    ]);
    expect(refused).toEqual([
      { kind: 'event', reason: 'missing' },
      { kind: 'event', reason: 'mismatch' },
      { kind: 'event', reason: 'mismatch' },
    ]);
  });

  it('during a rolling update (acceptUnsigned) hands over the events of a publisher that does not sign, never a wrongly signed one', async () => {
    const { prefix, insider } = await start();
    const oldPublisher = await bus({ signed: false });
    const consumer = await bus({ acceptUnsigned: true });
    await oldPublisher.publishEvent('scans.recorded', { scans: [{ serial: 'OLD-1' }] });
    const wrong = headers();
    wrong.set('hallmark-signature', `1.${randomBytes(32).toString('base64url')}`);
    await jetstream(insider).publish(`${prefix}.events.scans.recorded`, encode({ scans: [{ serial: 'FORGED' }] }), {
      headers: wrong,
    });
    await oldPublisher.publishEvent('scans.recorded', { scans: [{ serial: 'LAST' }] });
    const seen = await consumeUntil(consumer, (event) => JSON.stringify(event.payload).includes('LAST'));
    expect(seen.map((event) => event.payload)).toEqual([{ scans: [{ serial: 'OLD-1' }] }, { scans: [{ serial: 'LAST' }] }]);
  });
});

describe('broadcasts on NATS, with an insider sending its own', () => {
  /** What a listener heard on `codes.code-blocked`, until a broadcast naming `last` arrives. */
  async function listen(listener: Bus) {
    const heard: unknown[] = [];
    await listener.onBroadcast('codes.code-blocked', (payload) => heard.push(payload));
    return {
      heard,
      until: (last: string) =>
        new Promise<unknown[]>((resolve, reject) => {
          const deadline = Date.now() + 5_000;
          const look = () => {
            if (JSON.stringify(heard).includes(last)) resolve(heard);
            else if (Date.now() > deadline) reject(new Error(`no broadcast naming ${last} in 5 s`));
            else setTimeout(look, 10);
          };
          look();
        }),
    };
  }

  it('hands a listener only what a holder of the secret broadcast: not one made up, moved, altered or signed with another secret', async () => {
    const { prefix, insider, refused } = await start();
    const sender = await bus();
    const listener = listen(await bus());
    const { heard, until } = await listener;
    const genuine = firstMessage(insider, `${prefix}.codes.>`);
    await insider.flush();
    await sender.broadcast('codes.code-blocked', { reportId: 'rep_genuine', serial: 'SN-1' });
    const copied = await genuine;
    expect(copied.headers?.get('hallmark-signature')).toMatch(/^1\.\d+\./);

    // Made up; the genuine signature on other bytes; moved from another subject; another secret's.
    insider.publish(`${prefix}.codes.code-blocked`, encode({ reportId: 'rep_forged', serial: 'SN-2' }));
    insider.publish(`${prefix}.codes.code-blocked`, encode({ reportId: 'rep_forged', serial: 'SN-3' }), {
      headers: copied.headers,
    });
    const elsewhere = firstMessage(insider, `${prefix}.codes.code-block-lifted`);
    await insider.flush();
    await sender.broadcast('codes.code-block-lifted', { reportId: 'rep_forged', serial: 'SN-4' });
    insider.publish(`${prefix}.codes.code-blocked`, (await elsewhere).data, { headers: (await elsewhere).headers });
    const stranger = await bus({ signed: false });
    const withOtherSecret = await createNatsBus({
      servers,
      name: 'bus-test-stranger',
      prefix,
      signer: createRequestSigner(randomBytes(32)),
    });
    setup?.buses.push(withOtherSecret);
    await stranger.broadcast('codes.code-blocked', { reportId: 'rep_forged', serial: 'SN-5' });
    await withOtherSecret.broadcast('codes.code-blocked', { reportId: 'rep_forged', serial: 'SN-6' });
    await insider.flush();
    await sender.broadcast('codes.code-blocked', { reportId: 'rep_last', serial: 'SN-LAST' });

    await until('SN-LAST');
    expect(heard).toEqual([
      { reportId: 'rep_genuine', serial: 'SN-1' },
      { reportId: 'rep_last', serial: 'SN-LAST' },
    ]);
    const dropped = refused.filter((refusal) => refusal.kind === 'broadcast').map((refusal) => refusal.reason);
    expect(dropped.sort()).toEqual(['mismatch', 'mismatch', 'mismatch', 'missing', 'missing']);
  });

  it('drops a genuine broadcast the insider sends again after the window', async () => {
    const { prefix, insider, refused } = await start();
    const sender = await bus();
    const { heard, until } = await listen(await bus());
    const genuine = firstMessage(insider, `${prefix}.codes.code-blocked`);
    await insider.flush();
    await sender.broadcast('codes.code-blocked', { reportId: 'rep_once', serial: 'SN-1' });
    const copied = await genuine;
    // The copy as it would look 31 s later: the same bytes and signature, its time now outside the window.
    const [version, time, mac] = String(copied.headers?.get('hallmark-signature')).split('.');
    const late = headers();
    late.set('hallmark-signature', `${version}.${Number(time) - 31_000}.${mac}`);
    insider.publish(copied.subject, copied.data, { headers: late });
    await insider.flush();
    await sender.broadcast('codes.code-blocked', { reportId: 'rep_last', serial: 'SN-LAST' });
    await until('SN-LAST');
    expect(heard).toEqual([
      { reportId: 'rep_once', serial: 'SN-1' },
      { reportId: 'rep_last', serial: 'SN-LAST' },
    ]);
    expect(refused.filter((refusal) => refusal.kind === 'broadcast').map((refusal) => refusal.reason)).toEqual(['expired']);
  });

  it('during a rolling update (acceptUnsigned) hands over an unsigned broadcast, never a wrongly signed one', async () => {
    const { prefix, insider } = await start();
    const oldSender = await bus({ signed: false });
    const { heard, until } = await listen(await bus({ acceptUnsigned: true }));
    await oldSender.broadcast('codes.code-blocked', { reportId: 'rep_old', serial: 'OLD-1' });
    const wrong = headers();
    wrong.set('hallmark-signature', `1.${Date.now()}.${randomBytes(32).toString('base64url')}`);
    insider.publish(`${prefix}.codes.code-blocked`, encode({ reportId: 'rep_forged', serial: 'FORGED' }), { headers: wrong });
    await insider.flush();
    await oldSender.broadcast('codes.code-blocked', { reportId: 'rep_last', serial: 'LAST' });
    await until('LAST');
    expect(heard).toEqual([
      { reportId: 'rep_old', serial: 'OLD-1' },
      { reportId: 'rep_last', serial: 'LAST' },
    ]);
  });
});

/** The first message the insider sees on `subject` (wildcards allowed). */
function firstMessage(insider: NatsConnection, subject: string): Promise<Msg> {
  return new Promise((resolve) => {
    const subscription = insider.subscribe(subject, {
      callback: (_error, message) => {
        subscription.unsubscribe();
        resolve(message);
      },
    });
  });
}
