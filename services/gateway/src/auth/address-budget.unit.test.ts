import { describe, expect, it } from 'vitest';
import { budgetAddressOf } from './address-budget.ts';

describe('the address whose budgets a request spends', () => {
  it('is an IPv4 address itself', () => {
    expect(budgetAddressOf('203.0.113.7')).toBe('203.0.113.7');
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
    expect(new Set(sameBlock.map(budgetAddressOf))).toEqual(new Set(['2001:db8:1:2::/64']));
    expect(budgetAddressOf('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(budgetAddressOf('::1')).toBe('0:0:0:0::/64');
    expect(budgetAddressOf('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });

  it('is the IPv4 address of an IPv4-mapped IPv6 address', () => {
    expect(budgetAddressOf('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(budgetAddressOf('::ffff:c000:201')).toBe('192.0.2.1');
  });

  it('leaves anything that is not an address as it is', () => {
    for (const text of ['unknown', '', '1:2:3', '2001:db8::1::2']) expect(budgetAddressOf(text)).toBe(text);
  });
});
