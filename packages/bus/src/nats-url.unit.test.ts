import { describe, expect, it } from 'vitest';
import { natsConnectionSettings } from './nats-url.ts';

describe('NATS URLs', () => {
  it('a plain URL: host and port, no credentials, no TLS', () => {
    expect(natsConnectionSettings('nats://127.0.0.1:4222')).toEqual({ servers: '127.0.0.1:4222' });
  });

  it('user and password are taken out of the servers and passed as options, percent-decoded', () => {
    expect(natsConnectionSettings('nats://hallmark:p%40ss%3Aword@nats.internal:4222')).toEqual({
      servers: 'nats.internal:4222',
      user: 'hallmark',
      pass: 'p@ss:word',
    });
  });

  it('a user part alone is a token', () => {
    expect(natsConnectionSettings('nats://s3cr3t-token@127.0.0.1:4222')).toEqual({
      servers: '127.0.0.1:4222',
      token: 's3cr3t-token',
    });
  });

  it('tls:// requires TLS, with the given authorities or the system ones', () => {
    expect(natsConnectionSettings('tls://u:p@nats:4222', '/etc/hallmark/ca.pem')).toEqual({
      servers: 'nats:4222',
      user: 'u',
      pass: 'p',
      tls: { caFile: '/etc/hallmark/ca.pem' },
    });
    expect(natsConnectionSettings('tls://nats:4222')).toEqual({ servers: 'nats:4222', tls: {} });
    expect(natsConnectionSettings('nats://nats:4222', '/etc/hallmark/ca.pem')).toEqual({ servers: 'nats:4222' });
  });
});
