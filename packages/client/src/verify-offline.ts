import { endOfYymmdd, verifyCodeSignature } from '@hallmark/codes';
import { ed25519PublicKeyObject } from '@hallmark/crypto';
import { parseDigitalLink } from '@hallmark/gs1';

/** A published key: RFC 8037 OKP members, and Hallmark's members saying whose it is (docs/SIGNING.md). */
export interface PublishedKey {
  kty?: string;
  crv?: string;
  x?: string;
  kid?: string;
  hallmark_environment?: string;
  hallmark_account?: string;
  hallmark_gtins?: string[];
  hallmark_gtin_prefixes?: string[];
  hallmark_signs_unowned?: boolean;
  /** A signing key rotated out: when it stopped signing (checkpoints dated after it are refused). */
  hallmark_retired_at?: string;
}

/** An account that owns GTINs in an environment but has no key of it in the set (docs/SIGNING.md). */
export interface OwnerWithoutKeys {
  hallmark_account?: string;
  hallmark_environment?: string;
  hallmark_gtins?: string[];
  hallmark_gtin_prefixes?: string[];
}

export interface JsonWebKeySet {
  keys: PublishedKey[];
  hallmark_owners_without_keys?: OwnerWithoutKeys[];
}

export type OfflineVerification =
  | {
      valid: true;
      kid: string;
      /** The account whose key signed: the GTIN's owner, or the operator for a GTIN nobody owns. */
      account: string;
      environment: string | undefined;
      gtin: string;
      serial: string;
      batch: string | undefined;
      expiry: string | undefined;
    }
  | { valid: false; reason: string };

// A saved key set is read as the Python client reads it: entries that are not objects, and members
// of another type than the service writes, count for nothing (a null entry or a string of prefixes
// threw here, where Python passed them over).
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isEd25519 = (key: PublishedKey) =>
  isObject(key) && key.kty === 'OKP' && key.crv === 'Ed25519' && typeof key.x === 'string' && typeof key.kid === 'string';

const stringsOf = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((each): each is string => typeof each === 'string') : [];

/** The set's owners without keys, when it lists them as the service does (an array of objects). */
const ownersWithoutKeys = (jwks: JsonWebKeySet): OwnerWithoutKeys[] =>
  (Array.isArray(jwks.hallmark_owners_without_keys) ? jwks.hallmark_owners_without_keys : []).filter((owner) => isObject(owner));

/** True when the key's account may sign codes of this GTIN by one of its claims. */
export function keyOwnsGtin(key: Pick<PublishedKey, 'hallmark_gtins' | 'hallmark_gtin_prefixes'>, gtin: string): boolean {
  return (
    stringsOf(key.hallmark_gtins).includes(gtin) ||
    stringsOf(key.hallmark_gtin_prefixes).some((prefix) => gtin.slice(1).startsWith(prefix))
  );
}

/**
 * The keys that may have signed a code of this GTIN, as online verification decides it: the keys
 * of the account that owns the GTIN (none when the set says its owner has no key); when no account
 * does, the operator's keys. Nobody else's. The set is one environment's.
 */
export function keysBoundToGtin(
  jwks: JsonWebKeySet,
  gtin: string,
): { keys: PublishedKey[]; owner: 'account' | 'operator'; account?: string } {
  const keys = (Array.isArray(jwks.keys) ? jwks.keys : []).filter(isEd25519);
  const owning = keys.filter((key) => keyOwnsGtin(key, gtin));
  if (owning.length > 0) return { keys: owning, owner: 'account', account: owning[0]?.hallmark_account };
  const keyless = ownersWithoutKeys(jwks).find((owner) => keyOwnsGtin(owner, gtin));
  if (keyless) {
    return {
      keys: [],
      owner: 'account',
      account: typeof keyless.hallmark_account === 'string' ? keyless.hallmark_account : undefined,
    };
  }
  return { keys: keys.filter((key) => key.hallmark_signs_unowned === true), owner: 'operator' };
}

/**
 * Checks a Hallmark code with no server: parse the link, find the keys bound to the GTIN's owner
 * (the set's `hallmark_*` members), and verify the signature under those keys only (the kid is
 * part of what is signed, so a key can only match its own codes). Fails closed: a set that does not
 * say whose keys are whose, or a signature by a key of an account that does not own the GTIN, is
 * not valid. Only keys of `environment` (live unless said) count. A code whose expiry date (AI 17,
 * read as online: GS1's rule for the century, expired at the end of that day in UTC) has passed by
 * `now` is not valid either, though genuine: online it is SUSPICIOUS with EXPIRED_CODE. Says
 * nothing of scan history, reports or blocks, nor of a test code's 24 hours (not in the link): those
 * need the service.
 */
export function verifyOffline(
  link: string,
  jwks: JsonWebKeySet,
  options: { environment?: 'live' | 'test'; now?: Date } = {},
): OfflineVerification {
  const parsed = parseDigitalLink(link);
  if (!parsed.ok) return { valid: false, reason: parsed.problem.message };
  const { gtin, serial, batch, variant, expiry, signature } = parsed.link;
  if (serial === undefined) return { valid: false, reason: 'The link has no serial number (/21/).' };
  // As online, where a live key's verification never takes a test code for genuine, and the reverse.
  const environment = options.environment ?? 'live';
  const all = (Array.isArray(jwks?.keys) ? jwks.keys : []).filter(
    (key) => isEd25519(key) && (key.hallmark_environment ?? environment) === environment,
  );
  if (all.length === 0) return { valid: false, reason: `The key set holds no Ed25519 key of the ${environment} environment.` };
  if (all.some((key) => typeof key.hallmark_account !== 'string')) {
    return {
      valid: false,
      reason:
        'The key set does not say whose keys are whose (no hallmark_account); fetch a current one from /.well-known/jwks.json.',
    };
  }
  const signedBy = (key: PublishedKey) => {
    const publicKey = Buffer.from(key.x as string, 'base64url');
    if (publicKey.length !== 32) return false;
    const fields = { kid: key.kid as string, gtin, serial, batch, variant, expiry };
    return verifyCodeSignature(ed25519PublicKeyObject(publicKey), fields, signature ?? '');
  };
  const owners = ownersWithoutKeys(jwks).filter((owner) => owner.hallmark_environment === environment);
  const bound = keysBoundToGtin({ keys: all, hallmark_owners_without_keys: owners }, gtin);
  const signer = bound.keys.find(signedBy);
  if (signer) {
    const now = options.now ?? new Date();
    const endOfExpiry = expiry === undefined ? undefined : endOfYymmdd(expiry, now);
    if (endOfExpiry !== undefined && endOfExpiry.getTime() <= now.getTime()) {
      // The last day it verified, YYYY-MM-DD.
      const expiredOn = new Date(endOfExpiry.getTime() - 1).toISOString().slice(0, 10);
      return {
        valid: false,
        reason: `The code expired on ${expiredOn} (its expiry date, AI 17); its signature is genuine (key ${signer.kid} of account ${signer.hallmark_account}), so online it is SUSPICIOUS with EXPIRED_CODE.`,
      };
    }
    return {
      valid: true,
      kid: signer.kid as string,
      account: signer.hallmark_account as string,
      environment: signer.hallmark_environment,
      gtin,
      serial,
      batch,
      expiry,
    };
  }
  const stranger = all.filter((key) => !bound.keys.includes(key)).find(signedBy);
  if (stranger) {
    return {
      valid: false,
      reason: `The signature is by key ${stranger.kid} of account ${stranger.hallmark_account}, which may not sign GTIN ${gtin}${
        bound.owner === 'account' ? ` (it is owned by account ${bound.account})` : ''
      }.`,
    };
  }
  if (bound.keys.length === 0) {
    return {
      valid: false,
      reason:
        bound.owner === 'account'
          ? `GTIN ${gtin} is owned by account ${bound.account}, which has no ${environment} key in the set: no code of it is genuine.`
          : `No key of the set may sign GTIN ${gtin}.`,
    };
  }
  return {
    valid: false,
    reason: `The signature does not verify under any of the ${bound.keys.length} keys bound to GTIN ${gtin}'s ${bound.owner === 'account' ? 'owner' : 'operator'}.`,
  };
}
