import { describe, expect, it } from 'vitest';
import { addressKeyOf, riskClientOf } from './client-address.ts';

describe('the key a client address counts under', () => {
  it('is an IPv4 address itself', () => {
    expect(addressKeyOf('203.0.113.7')).toBe('203.0.113.7');
  });

  it('is an IPv6 address’s /64, however the address is written', () => {
    const sameBlock = [
      '2001:db8:1:2::1',
      '2001:db8:1:2:ffff:ffff:ffff:ffff',
      '2001:0DB8:0001:0002:0000:0000:0000:00aa',
      '2001:db8:1:2:0:0:c000:201',
      '2001:db8:1:2::192.0.2.1',
      '2001:db8:1:2::9%eth0',
    ];
    expect(new Set(sameBlock.map(addressKeyOf))).toEqual(new Set(['2001:db8:1:2::/64']));
    expect(addressKeyOf('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(addressKeyOf('::1')).toBe('0:0:0:0::/64');
    expect(addressKeyOf('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });

  it('is the IPv4 address of an IPv4-mapped IPv6 address', () => {
    expect(addressKeyOf('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(addressKeyOf('::ffff:c000:201')).toBe('192.0.2.1');
  });

  it('leaves anything that is not an address as it is', () => {
    for (const text of [
      'unknown',
      '',
      '1:2:3',
      '2001:db8::1::2',
      '2001:db8::g',
      '2001:db8::12345',
      'a:b:c:d:e:f:1.2.3.4:5',
      '::ffff:1.2.3.256',
      '::a1.2.3.4',
      '1::2:3:4:5:6:7:8',
    ])
      expect(addressKeyOf(text)).toBe(text);
  });
});

describe('the network a client counts as to the risk rules', () => {
  it('is an IPv4 address’s /24, however the address is written', () => {
    const sameNetwork = ['203.0.113.7', '203.0.113.250', '::ffff:203.0.113.9', '::ffff:cb00:7101'];
    expect(new Set(sameNetwork.map(riskClientOf))).toEqual(new Set(['203.0.113.0/24']));
    expect(riskClientOf('203.0.114.7')).toBe('203.0.114.0/24');
  });

  it('is an IPv6 address’s /48: the /64s of one /48 are one client', () => {
    const sameNetwork = ['2001:db8:1:2::1', '2001:db8:1:ffff::1', '2001:0DB8:0001:0000:0000:0000:0000:00aa', '2001:db8:1::%eth0'];
    expect(new Set(sameNetwork.map(riskClientOf))).toEqual(new Set(['2001:db8:1::/48']));
    expect(riskClientOf('2001:db8:2::1')).toBe('2001:db8:2::/48');
  });

  it('is the /24 of the IPv4 address an IPv6 one carries: NAT64, and 6to4 (whose every IPv4 address holds a /48)', () => {
    const sameNetwork = ['64:ff9b::203.0.113.7', '64:ff9b::cb00:71fe', '2002:cb00:7107::1', '2002:cb00:71ff:1::1'];
    expect(new Set(sameNetwork.map(riskClientOf))).toEqual(new Set(['203.0.113.0/24']));
    expect(riskClientOf('2002:cb00:7207::1')).toBe('203.0.114.0/24');
  });

  it('leaves anything that is not an address as it is', () => {
    for (const text of ['unknown', '', '1:2:3', '300.1.2.3', '1.2.3.256', '1.2.3', '2001:db8::g'])
      expect(riskClientOf(text)).toBe(text);
  });
});
