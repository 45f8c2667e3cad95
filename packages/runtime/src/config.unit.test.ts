import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { ConfigError, DistributedConfig, EmbeddedConfig, readConfig } from './config.ts';

const valid = {
  HALLMARK_NATS_URL: 'nats://127.0.0.1:4222',
  HALLMARK_DATABASE_URL: 'postgres://127.0.0.1:5432/hallmark',
  HALLMARK_REDIS_URL: 'redis://127.0.0.1:6379',
  HALLMARK_BUS_SECRET: 'ab'.repeat(32),
};

describe('readConfig', () => {
  it('fills defaults and turns numbers from text into numbers', () => {
    const config = readConfig(DistributedConfig, { ...valid, HALLMARK_REQUEST_TIMEOUT_MS: '2500' });
    expect(config.HALLMARK_REQUEST_TIMEOUT_MS).toBe(2500);
    expect(config.HALLMARK_NAMESPACE).toBe('hallmark');
    expect(config.HALLMARK_LOG_LEVEL).toBe('info');
    expect(config.HALLMARK_PROBE_PORT).toBeUndefined();
  });

  it("takes PGlite's buffer cache as a size with its unit, 128MB unless told, and refuses anything else before it reaches PGlite's start parameters", () => {
    expect(readConfig(EmbeddedConfig, {}).HALLMARK_PGLITE_SHARED_BUFFERS).toBe('128MB');
    expect(readConfig(EmbeddedConfig, { HALLMARK_PGLITE_SHARED_BUFFERS: '16MB' }).HALLMARK_PGLITE_SHARED_BUFFERS).toBe('16MB');
    expect(readConfig(EmbeddedConfig, { HALLMARK_PGLITE_SHARED_BUFFERS: '1024MB' }).HALLMARK_PGLITE_SHARED_BUFFERS).toBe(
      '1024MB',
    );
    for (const bad of ['16', '0MB', '16 MB', '16mb', '16MB -c fsync=on', '64kB', '1025MB', '2GB', '01MB']) {
      expect(() => readConfig(EmbeddedConfig, { HALLMARK_PGLITE_SHARED_BUFFERS: bad }), bad).toThrow(
        /HALLMARK_PGLITE_SHARED_BUFFERS/,
      );
    }
  });

  it('names every bad or missing variable, what it must be, and what it was', () => {
    let error: unknown;
    try {
      readConfig(DistributedConfig, {
        ...valid,
        HALLMARK_REDIS_URL: undefined,
        HALLMARK_REQUEST_TIMEOUT_MS: 'soon',
        HALLMARK_LOG_LEVEL: 'loud',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain('HALLMARK_REDIS_URL');
    expect(message).toContain('HALLMARK_REQUEST_TIMEOUT_MS: milliseconds from 100 to 60000');
    expect(message).toContain('"soon"');
    expect(message).toContain('HALLMARK_LOG_LEVEL: one of fatal');
    expect(message).not.toContain('HALLMARK_NATS_URL');
  });

  it('refuses a value out of range', () => {
    expect(() => readConfig(Type.Object({ PORT: Type.Integer({ minimum: 0, maximum: 65535 }) }), { PORT: '70000' })).toThrow(
      /PORT/,
    );
  });

  it('requires the bus secret, as 32 bytes in hex or base64', () => {
    expect(() => readConfig(DistributedConfig, { ...valid, HALLMARK_BUS_SECRET: undefined })).toThrow(/HALLMARK_BUS_SECRET/);
    expect(() => readConfig(DistributedConfig, { ...valid, HALLMARK_BUS_SECRET: 'ab'.repeat(16) })).toThrow(
      /HALLMARK_BUS_SECRET: 32 bytes/,
    );
    const base64 = Buffer.alloc(32, 9).toString('base64');
    expect(readConfig(DistributedConfig, { ...valid, HALLMARK_BUS_SECRET: base64 }).HALLMARK_BUS_SECRET).toBe(base64);
  });

  it('treats an empty variable as unset', () => {
    expect(readConfig(DistributedConfig, { ...valid, HALLMARK_NAMESPACE: '' }).HALLMARK_NAMESPACE).toBe('hallmark');
  });
});
