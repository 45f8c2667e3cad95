import { describe, expect, it } from 'vitest';
import { deliverOnce, type Send } from './http-sender.ts';
import { nextDelayMs, standardRetryScheduleMs } from './schedule.ts';
import { isRefusedAddress, type Lookup, RefusedTarget, resolveTarget } from './ssrf.ts';

/** A connection that fails the test if anything tries to make it. */
const neverConnect: Send = () => {
  throw new Error('SSRF test: a connection was attempted');
};

const lookupTo =
  (...addresses: string[]): Lookup =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

async function deliverVia(url: string, lookup: Lookup, allowPrivate = false) {
  // What the worker does: resolve and check, then connect to the checked address only.
  const target = await resolveTarget(url, { allowPrivate, lookup });
  return neverConnect(target, {}, '', 1_000);
}

describe('SSRF guard', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::7f00:1',
    '::ffff:0:7f00:1',
    '64:ff9b::a00:1',
    '64:ff9b:1::a00:1',
    '2002:7f00:1::1',
    '2001:0:53aa:64c::1',
    // Documentation (RFC 3849, RFC 9637), SRv6 segment identifiers (RFC 9602), the 6to4 relay anycast (RFC 7526).
    '2001:db8::1',
    '3fff::1',
    '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff',
    '5f00::1',
    '5f00:ffff::1',
    '2001:2::1',
    '2001:2:0:ffff::1',
    '2001:10::1',
    '2001:1f:ffff::1',
    '2001:20::1',
    '2001:2f:ffff::1',
    '192.88.99.1',
    '192.88.99.255',
    '::ffff:192.88.99.1',
    '192.0.2.1',
    '198.51.100.7',
    '203.0.113.9',
  ])('refuses %s after DNS resolution, before any connection', async (address) => {
    expect(isRefusedAddress(address)).toBe(true);
    await expect(deliverVia('https://hooks.example.com/x', lookupTo(address))).rejects.toBeInstanceOf(RefusedTarget);
  });

  it('refuses a name whose answers include one private address (rebinding with several records)', async () => {
    const refused = await deliverVia('https://hooks.example.com/x', lookupTo('93.184.216.34', '10.0.0.5')).catch(
      (error) => error,
    );
    expect(refused).toBeInstanceOf(RefusedTarget);
    // The operator's log names the address; the endpoint's owner, who reads the message, is not told it.
    expect(refused.detail).toContain('10.0.0.5');
    expect(refused.message).not.toContain('10.0.0.5');
  });

  it('refuses literal private addresses in the URL without asking DNS', async () => {
    const lookup: Lookup = async () => {
      throw new Error('DNS asked for a literal');
    };
    await expect(deliverVia('http://127.0.0.1:8080/x', lookup)).rejects.toBeInstanceOf(RefusedTarget);
    await expect(deliverVia('http://[::1]/x', lookup)).rejects.toBeInstanceOf(RefusedTarget);
  });

  it('refuses other schemes and credentials in the URL', async () => {
    for (const url of [
      'ftp://example.com/x',
      'file:///etc/passwd',
      'gopher://example.com',
      'https://user:pw@example.com/',
      // Parsed as http://x/, written as something else.
      'http:///x',
      'http:x',
      'http:\\\\x',
      'https:/example.com',
    ]) {
      await expect(resolveTarget(url, { allowPrivate: true, lookup: lookupTo('93.184.216.34') })).rejects.toBeInstanceOf(
        RefusedTarget,
      );
    }
  });

  it('allows a public address, pinned to the address checked; private ones only when the operator allows', async () => {
    const target = await resolveTarget('https://hooks.example.com/x', { allowPrivate: false, lookup: lookupTo('93.184.216.34') });
    expect(target).toMatchObject({ address: '93.184.216.34', family: 4 });
    expect(target.url.hostname).toBe('hooks.example.com');
    expect(isRefusedAddress('2606:4700::1111')).toBe(false);
    // Just outside the documentation, SRv6 and 6to4-relay ranges: ordinary addresses.
    for (const address of [
      '3fff:1000::1',
      '5f01::1',
      '5eff:ffff::1',
      '192.88.98.255',
      '192.88.100.1',
      '2001:2:1::1',
      '2001:30::1',
      '2001:4860::8888',
    ]) {
      expect(isRefusedAddress(address), address).toBe(false);
    }
    const allowed = await resolveTarget('http://internal.example/x', { allowPrivate: true, lookup: lookupTo('10.0.0.7') });
    expect(allowed.address).toBe('10.0.0.7');
  });
});

describe('the attempt’s deadline covers the DNS lookup', () => {
  it('a nameserver that never answers ends the attempt at the timeout, refused as a name that does not resolve, nothing connected', async () => {
    let asked = 0;
    const neverAnswers: Lookup = () => {
      asked += 1;
      return new Promise(() => {}); // no answer, no error: a resolver retrying for its whole time
    };
    const started = performance.now();
    const refused = await deliverOnce('https://hooks.example.com/x', {}, '{}', {
      allowPrivate: false,
      lookup: neverAnswers,
      send: neverConnect,
      timeoutMs: 200,
    }).catch((error: unknown) => error);
    const took = performance.now() - started;
    expect(asked).toBe(1);
    expect(refused).toBeInstanceOf(RefusedTarget);
    // The owner reads what any unresolvable name gives; the operator's log says why.
    expect((refused as RefusedTarget).message).toMatch(/does not resolve/);
    expect((refused as RefusedTarget).detail).toBe('DNS lookup timed out after 200 ms');
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(1_000);
  }, 2_000);

  it('a slow lookup leaves the exchange only what is left of the timeout', async () => {
    const sent: Array<{ address: string; timeoutMs: number; remainingMs: number | undefined }> = [];
    const recording: Send = async (target, _headers, _body, timeoutMs, remainingMs) => {
      sent.push({ address: target.address, timeoutMs, remainingMs });
      return { status: 204 };
    };
    const slowLookup: Lookup = () =>
      new Promise((resolve) => setTimeout(() => resolve([{ address: '93.184.216.34', family: 4 }]), 150));
    const result = await deliverOnce('https://hooks.example.com/x', {}, '{}', {
      allowPrivate: false,
      lookup: slowLookup,
      send: recording,
      timeoutMs: 400,
    });
    expect(result).toEqual({ status: 204 });
    expect(sent).toHaveLength(1);
    expect(sent[0]?.address).toBe('93.184.216.34');
    expect(sent[0]?.timeoutMs).toBe(400);
    expect(sent[0]?.remainingMs).toBeGreaterThan(0);
    expect(sent[0]?.remainingMs).toBeLessThanOrEqual(400 - 140);
  });
});

describe('retry schedule', () => {
  it('follows Standard Webhooks: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then gives up', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7].map((n) => nextDelayMs(standardRetryScheduleMs, n));
    expect(delays).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(nextDelayMs(standardRetryScheduleMs, 8)).toBeUndefined();
  });

  it('waits at least what Retry-After asks, up to 10 h', () => {
    expect(nextDelayMs(standardRetryScheduleMs, 1, 60)).toBe(60_000);
    expect(nextDelayMs(standardRetryScheduleMs, 2, 1)).toBe(300_000);
    expect(nextDelayMs(standardRetryScheduleMs, 1, 999_999)).toBe(36_000_000);
  });
});
