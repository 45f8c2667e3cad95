import { Value } from '@sinclair/typebox/value';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { clientAddressOf, TrustProxySetting, trustProxyOf } from './trust-proxy.ts';

/** request.ip as fastify sees it with the setting, for a request from `peer` carrying X-Forwarded-For. */
async function clientAddress(setting: string, peer: string, forwardedFor?: string): Promise<string> {
  const app = Fastify({ trustProxy: trustProxyOf(setting) });
  app.get('/', async (request) => request.ip);
  const response = await app.inject({
    method: 'GET',
    url: '/',
    remoteAddress: peer,
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  });
  await app.close();
  return response.body;
}

describe('HALLMARK_TRUST_PROXY', () => {
  it('accepts off, hop counts and lists of addresses and ranges; refuses "everyone" and garbage', () => {
    for (const good of [
      'off',
      '1',
      '2',
      '10.0.0.0/8',
      '10.0.0.0/8, 192.168.1.7',
      'fd00::/8,::1',
      'loopback',
      '127.0.0.1/32,loopback',
    ]) {
      expect(Value.Check(TrustProxySetting, good), good).toBe(true);
    }
    for (const bad of ['true', 'on', '*', '0', '10', 'yes', '10.0.0.0/33', '300.1.1.1', '10.0.0.0/8;rm', '', 'a,b']) {
      expect(Value.Check(TrustProxySetting, bad), bad).toBe(false);
    }
  });

  it('maps to fastify’s trustProxy', () => {
    expect(trustProxyOf('off')).toBe(false);
    const twoHops = trustProxyOf('2') as (address: string, hop: number) => boolean;
    expect([0, 1, 2].map((hop) => twoHops('10.0.0.1', hop))).toEqual([true, true, false]);
    expect(trustProxyOf('10.0.0.0/8, ::1')).toEqual(['10.0.0.0/8', '::1']);
  });

  it('off: X-Forwarded-For is ignored; the socket’s address is the client', async () => {
    expect(await clientAddress('off', '10.1.2.3', '198.51.100.9')).toBe('10.1.2.3');
  });

  it('one hop: the address the proxy appended, not what the client wrote before it', async () => {
    expect(await clientAddress('1', '10.1.2.3', '198.51.100.9')).toBe('198.51.100.9');
    expect(await clientAddress('1', '10.1.2.3', '6.6.6.6, 198.51.100.9')).toBe('198.51.100.9');
    expect(await clientAddress('2', '10.1.2.3', '6.6.6.6, 198.51.100.9, 10.4.4.4')).toBe('198.51.100.9');
    expect(await clientAddress('1', '10.1.2.3')).toBe('10.1.2.3');
  });

  it('a CIDR list: forwarded addresses count only from a listed proxy', async () => {
    expect(await clientAddress('10.0.0.0/8', '10.1.2.3', '198.51.100.9')).toBe('198.51.100.9');
    expect(await clientAddress('10.0.0.0/8', '203.0.113.5', '198.51.100.9')).toBe('203.0.113.5');
    // Two listed proxies in a row: the first address neither of them is.
    expect(await clientAddress('10.0.0.0/8', '10.1.2.3', '6.6.6.6, 198.51.100.9, 10.9.9.9')).toBe('198.51.100.9');
  });

  it('reads a forwarded address with a port as that address, and anything else as the proxy', () => {
    expect(clientAddressOf('198.51.100.9', '10.1.2.3')).toBe('198.51.100.9');
    expect(clientAddressOf('2001:db8::1', '10.1.2.3')).toBe('2001:db8::1');
    expect(clientAddressOf('198.51.100.9:5555', '10.1.2.3')).toBe('198.51.100.9');
    expect(clientAddressOf('[2001:db8::1]:80', '10.1.2.3')).toBe('2001:db8::1');
    expect(clientAddressOf('[2001:db8::1]', '10.1.2.3')).toBe('2001:db8::1');
    for (const odd of ['unknown', 'garbage', '', '999.1.1.1:80', '[198.51.100.9]:80', 'x'.repeat(8_000)]) {
      expect(clientAddressOf(odd, '10.1.2.3'), odd.slice(0, 20)).toBe('10.1.2.3');
    }
  });
});
