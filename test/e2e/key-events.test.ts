import { accountStream } from '@hallmark/provenance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// Issue #17, item 1: an API key issued or revoked through the API is an event in the account's
// stream, written with the key's row in one transaction, and no event holds a secret or its hash.

let t: TestProduct;
let operator: string;

const api = <T = Record<string, unknown>>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(t.url, method, `/api/v1${path}`, options);

interface StoredRow {
  stream_version: number;
  event_type: string;
  data: Record<string, unknown> | string;
}

async function eventsOf(accountId: string, environment: 'live' | 'test') {
  const rows = await t.product.db.query<StoredRow>(
    'SELECT stream_version, event_type, data FROM event_log WHERE stream_id = $1 ORDER BY stream_version',
    [accountStream({ accountId, environment })],
  );
  return rows.map((row) => ({ type: row.event_type, data: typeof row.data === 'string' ? JSON.parse(row.data) : row.data }));
}

beforeAll(async () => {
  t = await startTestProduct();
  operator = t.product.generatedOperatorKey as string;
});
afterAll(() => t?.stop());

describe('API keys as events in the account’s stream', () => {
  it('records a key issued and revoked (once), in the key’s environment, with no secret, hash or prefix', async () => {
    const tenant = await api<{ account: { id: string }; apiKey: { secret: string; id: string } }>('POST', '/accounts', {
      key: operator,
      body: { name: 'Maison Events', tier: 'starter' },
    });
    expect(tenant.status).toBe(201);
    const accountId = tenant.body.account.id;
    const root = tenant.body.apiKey;

    const created = await api<{ id: string; secret: string; prefix: string; expiresAt: string }>('POST', '/keys', {
      key: root.secret,
      body: { name: 'reader', scopes: ['assets:read'], expiresIn: '30d' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const sandbox = await api<{ id: string; secret: string }>('POST', '/keys', {
      key: root.secret,
      body: { name: 'sandbox', scopes: ['assets:read'], environment: 'test' },
    });
    expect(sandbox.status).toBe(201);

    const first = await api<{ revokedAt: string }>('POST', `/keys/${created.body.id}/revoke`, { key: root.secret });
    expect(first.status).toBe(200);
    const again = await api<{ revokedAt: string }>('POST', `/keys/${created.body.id}/revoke`, { key: root.secret });
    expect(again.body.revokedAt).toBe(first.body.revokedAt);

    const live = await eventsOf(accountId, 'live');
    expect(live).toEqual([
      {
        type: 'account.created',
        data: { accountId, name: 'Maison Events', tier: 'starter', isOperator: false, createdAt: expect.any(String) },
      },
      {
        type: 'key.issued',
        data: {
          keyId: root.id,
          accountId,
          environment: 'live',
          name: 'first key',
          scopes: ['*'],
          createdBy: null,
          createdAt: expect.any(String),
          expiresAt: null,
        },
      },
      {
        type: 'key.issued',
        data: {
          keyId: created.body.id,
          accountId,
          environment: 'live',
          name: 'reader',
          scopes: ['assets:read'],
          createdBy: root.id,
          createdAt: expect.any(String),
          expiresAt: created.body.expiresAt,
        },
      },
      { type: 'key.revoked', data: { keyId: created.body.id, revokedAt: first.body.revokedAt, revokedBy: root.id } },
    ]);
    const test = await eventsOf(accountId, 'test');
    expect(test).toMatchObject([{ type: 'key.issued', data: { keyId: sandbox.body.id, environment: 'test' } }]);

    const everything = JSON.stringify([live, test]);
    for (const secret of [root.secret, created.body.secret, sandbox.body.secret]) {
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(secret.slice(9, 30));
    }
    expect(everything).not.toContain(created.body.prefix.replace('…', ''));
  });

  it('records nothing for a refusal: a scope the creator lacks, or revoking a stronger key', async () => {
    const tenant = await api<{ account: { id: string }; apiKey: { secret: string; id: string } }>('POST', '/accounts', {
      key: operator,
      body: { name: 'Maison Refused', tier: 'starter' },
    });
    const accountId = tenant.body.account.id;
    const narrow = await api<{ id: string; secret: string }>('POST', '/keys', {
      key: tenant.body.apiKey.secret,
      body: { name: 'narrow', scopes: ['keys:write'] },
    });
    expect(narrow.status).toBe(201);
    const before = await eventsOf(accountId, 'live');

    const escalate = await api('POST', '/keys', { key: narrow.body.secret, body: { name: 'x', scopes: ['assets:create'] } });
    expect(escalate.status).toBe(403);
    const revokeRoot = await api('POST', `/keys/${tenant.body.apiKey.id}/revoke`, { key: narrow.body.secret });
    expect(revokeRoot.status).toBe(403);

    expect(await eventsOf(accountId, 'live')).toEqual(before);
    expect(before.map((event) => event.type)).toEqual(['account.created', 'key.issued', 'key.issued']);
  });

  it('records the operator’s account and its bootstrap key, made at the first start', async () => {
    const own = await api<{ accountId: string; keys: { id: string; name: string }[] }>('GET', '/keys?type=api', {
      key: operator,
    });
    const bootstrap = own.body.keys.find((key) => key.name === 'bootstrap key');
    expect(bootstrap).toBeDefined();
    expect(await eventsOf(own.body.accountId, 'live')).toEqual([
      {
        type: 'account.created',
        data: {
          accountId: own.body.accountId,
          name: 'operator',
          tier: 'enterprise',
          isOperator: true,
          createdAt: expect.any(String),
        },
      },
      expect.objectContaining({ type: 'key.issued', data: expect.objectContaining({ keyId: bootstrap?.id, scopes: ['*'] }) }),
    ]);
  });
});
