import { describe, expect, it } from 'vitest';
import { ConfigError } from './config.ts';
import { refuseTrivialMasterKey } from './master-key-strength.ts';

describe('refuseTrivialMasterKey', () => {
  const trivial = [
    '0'.repeat(64),
    'ff'.repeat(32),
    '42'.repeat(32),
    Buffer.alloc(32).toString('base64'),
    Buffer.alloc(32, 9).toString('base64'),
  ];

  it.each(trivial)('refuses %s in production, naming the variable and the way out', (key) => {
    expect(() => refuseTrivialMasterKey(key, 'production')).toThrow(ConfigError);
    expect(() => refuseTrivialMasterKey(key, 'production')).toThrow(/HALLMARK_MASTER_KEY.*HALLMARK_ENVIRONMENT=test/s);
  });

  it('lets a test deployment use one', () => {
    for (const key of trivial) expect(() => refuseTrivialMasterKey(key, 'test')).not.toThrow();
  });

  it('accepts a random key in either form', () => {
    const bytes = Buffer.from(Array.from({ length: 32 }, (_, index) => (index * 37 + 11) % 256));
    expect(() => refuseTrivialMasterKey(bytes.toString('hex'), 'production')).not.toThrow();
    expect(() => refuseTrivialMasterKey(bytes.toString('base64'), 'production')).not.toThrow();
    // Two distinct bytes are not "one byte repeated".
    expect(() => refuseTrivialMasterKey(`01${'00'.repeat(31)}`, 'production')).not.toThrow();
  });
});
