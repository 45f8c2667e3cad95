/** Every scope a key can hold (docs/INTERFACE.md, Keys and scopes), besides `*`. */
export const scopes = [
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
export type NamedScope = (typeof scopes)[number];
/** `*` grants every scope of the key's account; `accounts:write` only to the operator's account. */
export type Scope = NamedScope | '*';

export function isScope(value: string): value is Scope {
  return value === '*' || (scopes as readonly string[]).includes(value);
}

export const tiers = ['free', 'starter', 'enterprise'] as const;
export type Tier = (typeof tiers)[number];

export const environments = ['test', 'live'] as const;
export type Environment = (typeof environments)[number];

/** Who is calling, as the gateway established it from the API key. Services scope every query by it. */
export interface Principal {
  accountId: string;
  environment: Environment;
}
