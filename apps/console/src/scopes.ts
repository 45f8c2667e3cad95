import type { SessionView } from './types.ts';

/** The named scopes a key can hold (packages/contracts/src/scopes.ts), in the order the console lists them. */
export const namedScopes = [
  'assets:create',
  'assets:read',
  'assets:verify',
  'assets:transfer',
  'documents:read',
  'compliance:write',
  'schemas:read',
  'schemas:write',
  'keys:read',
  'keys:write',
  'accounts:write',
] as const;

/** Whether the signed-in key holds a scope (`*` holds every one). */
export function holds(session: SessionView, scope: string): boolean {
  return session.key.scopes.includes('*') || session.key.scopes.includes(scope);
}

/**
 * The scopes a key created from this session may have: the creator's own, never more. A `*` key
 * may hand out `*` and each named scope (`accounts:write` only where it is the operator's).
 */
export function grantableScopes(session: SessionView): string[] {
  if (!session.key.scopes.includes('*')) return [...session.key.scopes];
  return ['*', ...namedScopes.filter((scope) => scope !== 'accounts:write' || session.key.isOperator)];
}

/**
 * The GTIN a key restricted to some GTINs lists by default (its first): the API lists codes, scans
 * and blocks for such a key one GTIN at a time. Undefined for a key without restrictions.
 */
export function restrictedGtin(session: SessionView): string | undefined {
  return session.key.restrictions?.gtins[0];
}
