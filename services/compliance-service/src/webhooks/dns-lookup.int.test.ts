import { createSocket, type Socket } from 'node:dgram';
import {
  ed25519PrivateKeyObject,
  ed25519PublicKeyObject,
  generateEd25519KeyPair,
  signEd25519,
  verifyEd25519InThreadPool,
} from '@hallmark/crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSystemLookup, type Lookup } from './dns-lookup.ts';

// A nameserver on loopback (docs/WEBHOOKS.md): it never answers a name under `silent.test`, the
// way an endpoint owner's own nameserver can hold every lookup of its webhook's host, and answers
// NXDOMAIN for the rest. Only this socket is asked: nothing leaves the machine.

let nameserver: Socket;
let servers: string[];
let silentQueries = 0;

/** The query's header and question, answered NXDOMAIN. */
function nxdomain(query: Buffer): Buffer {
  let end = 12;
  while (end < query.length && query[end] !== 0) end += (query[end] as number) + 1;
  const answer = Buffer.from(query.subarray(0, end + 5));
  answer[2] = 0x81; // a response, recursion desired
  answer[3] = 0x83; // recursion available, NXDOMAIN
  answer.writeUInt16BE(0, 6); // no answers,
  answer.writeUInt16BE(0, 8); // no authority,
  answer.writeUInt16BE(0, 10); // no additional records
  return answer;
}

beforeAll(async () => {
  nameserver = createSocket('udp4');
  nameserver.on('message', (query, peer) => {
    if (query.toString('latin1').includes('\x06silent\x04test')) {
      silentQueries++;
      return;
    }
    nameserver.send(nxdomain(query), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => nameserver.bind(0, '127.0.0.1', resolve));
  servers = [`127.0.0.1:${nameserver.address().port}`];
});
afterAll(() => nameserver?.close());

/** A system resolver that must not be asked. */
const systemNeverAsked: Lookup = async (hostname) => {
  throw new Error(`the system resolver was asked for ${hostname}`);
};

describe('webhook DNS lookups', () => {
  it('hold no thread of the pool while a nameserver never answers, and stop when the delivery stops waiting', async () => {
    const lookup = createSystemLookup({ servers, tryTimeoutMs: 30_000, tries: 1, systemLookup: systemNeverAsked });
    const stop = new AbortController();
    // More hanging lookups than the pool has threads (4): with getaddrinfo each would hold one.
    const hanging = Array.from({ length: 8 }, (_, i) =>
      lookup(`host-${i}.silent.test`, stop.signal).then(
        () => 'answered',
        (error: NodeJS.ErrnoException) => error.code ?? error.message,
      ),
    );
    const asked = Date.now();
    while (silentQueries < 8 && Date.now() - asked < 2_000) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(silentQueries).toBeGreaterThanOrEqual(8);

    // The pool's work goes on meanwhile: 400 Ed25519 checks in the pool, as verifications make them.
    const pair = generateEd25519KeyPair();
    const publicKey = ed25519PublicKeyObject(pair.publicKey);
    const message = Buffer.from('gtin=09506000134352&serial=DNS-1');
    const signature = signEd25519(ed25519PrivateKeyObject(pair), message);
    const started = performance.now();
    const checks = await Promise.all(Array.from({ length: 400 }, () => verifyEd25519InThreadPool(publicKey, message, signature)));
    const tookMs = performance.now() - started;
    expect(checks.every(Boolean)).toBe(true);
    expect(tookMs).toBeLessThan(5_000);

    // The delivery's timeout: every query is cancelled, none waits for c-ares' own 30 s.
    const stoppedAt = Date.now();
    stop.abort();
    expect(await Promise.all(hanging)).toEqual(Array(8).fill('ECANCELLED'));
    expect(Date.now() - stoppedAt).toBeLessThan(1_000);
  });

  it('asks the system resolver only for names DNS says do not exist, one at a time, and not for a caller that stopped waiting', async () => {
    let systemCalls = 0;
    const pending: Array<() => void> = [];
    const system: Lookup = async (hostname) => {
      systemCalls++;
      await new Promise<void>((resolve) => pending.push(resolve));
      return [{ address: '192.0.2.10', family: 4 }].map((entry) => ({ ...entry, hostname }));
    };
    const lookup = createSystemLookup({ servers, tryTimeoutMs: 2_000, tries: 1, systemLookup: system });
    const second = new AbortController();
    const first = lookup('receiver');
    const abandoned = lookup('receiver-2', second.signal).catch(() => 'gave up');
    const third = lookup('receiver-3');
    const until = Date.now() + 2_000;
    while (systemCalls === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(systemCalls).toBe(1);

    second.abort();
    expect(await abandoned).toBe('gave up');
    pending.shift()?.();
    expect(await first).toEqual([{ address: '192.0.2.10', family: 4, hostname: 'receiver' }]);
    while (systemCalls === 1 && Date.now() < until + 2_000) await new Promise((resolve) => setTimeout(resolve, 10));
    // The third ran next; the abandoned second never reached the system resolver.
    expect(systemCalls).toBe(2);
    pending.shift()?.();
    expect(await third).toMatchObject([{ hostname: 'receiver-3' }]);
  });

  it('refuses at once a name whose nameserver times out, without the system resolver', async () => {
    const lookup = createSystemLookup({ servers, tryTimeoutMs: 200, tries: 1, systemLookup: systemNeverAsked });
    await expect(lookup('slow.silent.test')).rejects.toMatchObject({ code: 'ETIMEOUT' });
  });
});
