import { type NamedScope, type Scope, scopes } from '@hallmark/contracts';

/** The scopes a key actually has: `*` expands to all, but `accounts:write` only for the operator's account. */
export function effectiveScopes(granted: readonly Scope[], isOperator: boolean): ReadonlySet<NamedScope> {
  if (!granted.includes('*')) return new Set(granted as NamedScope[]);
  return new Set(scopes.filter((scope) => scope !== 'accounts:write' || isOperator));
}

export function holdsScope(granted: readonly Scope[], isOperator: boolean, required: Scope): boolean {
  if (granted.includes('*')) return required !== 'accounts:write' || isOperator;
  return required !== '*' && granted.includes(required);
}

/**
 * The requested scopes a creator may not grant: each must be one it holds itself, and `*` needs `*`.
 * Empty when the request is allowed.
 */
export function scopesBeyond(creator: readonly Scope[], creatorIsOperator: boolean, requested: readonly Scope[]): Scope[] {
  return requested.filter((scope) => !holdsScope(creator, creatorIsOperator, scope));
}
