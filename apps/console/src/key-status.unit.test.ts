import { describe, expect, it } from 'vitest';
import { keyStatus } from './key-status.ts';
import type { ApiKeyView } from './types.ts';

const now = Date.parse('2026-11-25T12:00:00Z');
const key = (fields: Partial<ApiKeyView>): ApiKeyView => ({
  id: 'k',
  type: 'api',
  name: 'k',
  environment: 'live',
  scopes: ['*'],
  prefix: 'svc_live_ab',
  status: 'active',
  createdAt: '2026-11-01T00:00:00Z',
  expiresAt: null,
  revokedAt: null,
  ...fields,
});

describe('keyStatus', () => {
  it('is revoked, expired, expiring within 24 hours, or active', () => {
    expect(keyStatus(key({ status: 'revoked', revokedAt: '2026-11-20T00:00:00Z' }), now).label).toBe('Revoked');
    expect(keyStatus(key({ status: 'expired', expiresAt: '2026-11-24T00:00:00Z' }), now).label).toBe('Expired');
    // Past its expiry though the list said active a moment ago.
    expect(keyStatus(key({ expiresAt: '2026-11-25T11:59:59Z' }), now).label).toBe('Expired');
    expect(keyStatus(key({ expiresAt: '2026-11-26T11:00:00Z' }), now).label).toBe('Expires soon');
    expect(keyStatus(key({ expiresAt: '2026-11-26T13:00:00Z' }), now).label).toBe('Active');
    expect(keyStatus(key({}), now).label).toBe('Active');
  });
});
