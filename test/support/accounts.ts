import { randomUUID } from 'node:crypto';
import { gs1CheckDigit } from '@hallmark/gs1';
import { expect } from 'vitest';
import { type ApiResponse, call } from './embedded.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let gtinCounter = 0;

/**
 * A GTIN-14 no other call of this process has made (GS1 prefix 0950…, outside the restricted
 * range 2), with its check digit: each test file's product has its own database, and within one a
 * random part and a counter keep describe blocks apart.
 */
export function freshGtin(): string {
  gtinCounter = (gtinCounter + 1) % 100;
  const digits = `0950${String(Math.floor(Math.random() * 10_000_000)).padStart(7, '0')}${String(gtinCounter).padStart(2, '0')}`;
  return `${digits}${gs1CheckDigit(digits)}`;
}

/** What `createAccount` made: the account, its first key's secret and, with a GTIN, the grant's id. */
export interface NewAccount {
  id: string;
  key: string;
  claimId: string | undefined;
}

/**
 * An account of `tier` made by the operator through `gateway` (its API base URL, without /api/v1),
 * granted `gtin` when one is given (through `grantVia`, another gateway, when given).
 */
export async function createAccount(
  gateway: string,
  operatorKey: string,
  options: { tier: 'free' | 'starter' | 'enterprise'; gtin?: string; name?: string; grantVia?: string },
): Promise<NewAccount> {
  const created: ApiResponse<Json> = await call<Json>(gateway, 'POST', '/api/v1/accounts', {
    key: operatorKey,
    body: { name: options.name ?? `Account ${randomUUID().slice(0, 6)}`, tier: options.tier },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  let claimId: string | undefined;
  if (options.gtin) {
    const granted = await call<Json>(options.grantVia ?? gateway, 'POST', `/api/v1/accounts/${created.body.account.id}/gtins`, {
      key: operatorKey,
      body: { gtin: options.gtin },
    });
    expect(granted.status, JSON.stringify(granted.body)).toBe(201);
    claimId = granted.body.id;
  }
  return { id: created.body.account.id as string, key: created.body.apiKey.secret as string, claimId };
}
