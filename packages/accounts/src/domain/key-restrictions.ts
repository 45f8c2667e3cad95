// A key's resource restrictions (spec, Authentication 7), as pure rules: what a restriction may
// list, and whether one key's restrictions cover another's. The gateway enforces them on requests
// (services/gateway/src/auth/key-restrictions.ts); the deciders here keep a restricted key from
// making, rotating or revoking a key that reaches further than it does.

import { type DomainError as ContractsDomainError, refuse } from '@hallmark/contracts';
import { asGtin14, checkGtin14 } from '@hallmark/gs1';

/** The GTINs a key is restricted to, each a GTIN-14, sorted; a key without restrictions has none (null). */
export interface Restrictions {
  gtins: readonly string[];
}

type RestrictionRefusal = ContractsDomainError<'KEY_RESTRICTED' | 'VALIDATION_ERROR'>;

/**
 * The restrictions a request asked for as they are kept: each GTIN as its GTIN-14 (a GTIN-13 with
 * its zero before it), sorted, once. VALIDATION_ERROR naming each GTIN whose check digit is wrong.
 */
export function restrictionsOf(requested: { gtins: readonly string[] }): Restrictions | RestrictionRefusal {
  const fields: { field: string; in: 'body'; message: string }[] = [];
  const gtins = new Set<string>();
  requested.gtins.forEach((given, index) => {
    const gtin = asGtin14(given);
    const check = checkGtin14(gtin);
    if (check.ok) gtins.add(gtin);
    else fields.push({ field: `restrictions.gtins.${index}`, in: 'body', message: check.message });
  });
  if (fields.length > 0) {
    return refuse('VALIDATION_ERROR', `Invalid request: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}.`, { fields });
  }
  return { gtins: [...gtins].sort() };
}

/**
 * Whether a key restricted as `held` may make, rotate or revoke a key restricted as `target`:
 * undefined when it may (the holder is not restricted, or every GTIN of the target is one of its
 * own); KEY_RESTRICTED otherwise, naming the GTINs beyond it (or that the target is unrestricted).
 */
export function refusalBeyondRestrictions(
  held: Restrictions | null,
  target: Restrictions | null,
  action: 'create' | 'rotate' | 'revoke',
): RestrictionRefusal | undefined {
  if (held === null) return undefined;
  if (target === null) {
    return refuse(
      'KEY_RESTRICTED',
      `A key restricted to some GTINs cannot ${action} a key without restrictions${action === 'create' ? ': send restrictions within its own' : ''}.`,
      { restrictedTo: { gtins: [...held.gtins] } },
    );
  }
  const beyond = target.gtins.filter((gtin) => !held.gtins.includes(gtin));
  if (beyond.length === 0) return undefined;
  return refuse(
    'KEY_RESTRICTED',
    `A key can ${action} only keys within its own GTINs; this one is not restricted to ${beyond.join(', ')}.`,
    {
      restrictedTo: { gtins: [...held.gtins] },
      beyond,
    },
  );
}
