import { ConfigError } from './config.ts';

/** The key's 32 bytes, from 64 hex characters or base64 (the forms MasterKeySetting admits). */
function bytesOf(masterKey: string): Buffer {
  const text = masterKey.trim();
  return /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
}

/**
 * A master key that is one byte repeated (all zero, a placeholder such as '42' × 32) is a key
 * anyone can guess: every signing key sealed with it, and every transfer-code hash keyed by it,
 * is as good as public. Refused unless HALLMARK_ENVIRONMENT is `test`.
 * @throws ConfigError naming HALLMARK_MASTER_KEY (the host exits 78).
 */
export function refuseTrivialMasterKey(masterKey: string, environment: 'production' | 'test'): void {
  if (environment === 'test') return;
  const bytes = bytesOf(masterKey);
  if (bytes.length > 0 && bytes.every((byte) => byte === bytes[0])) {
    throw new ConfigError(
      'Invalid configuration:\n  HALLMARK_MASTER_KEY: is one byte repeated (e.g. all zero), a key anyone can guess; ' +
        'make one with `openssl rand -hex 32`, or set HALLMARK_ENVIRONMENT=test for a test deployment',
    );
  }
}
