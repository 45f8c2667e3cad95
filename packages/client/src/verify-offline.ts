import { verifyCodeSignature } from '@hallmark/codes';
import { ed25519PublicKeyObject } from '@hallmark/crypto';
import { parseDigitalLink } from '@hallmark/gs1';

export interface JsonWebKeySet {
  keys: Array<{ kty?: string; crv?: string; x?: string; kid?: string; hallmark_environment?: string }>;
}

export type OfflineVerification =
  | {
      valid: true;
      kid: string;
      environment: string | undefined;
      gtin: string;
      serial: string;
      batch: string | undefined;
      expiry: string | undefined;
    }
  | { valid: false; reason: string };

/**
 * Checks a Hallmark code with no server: parse the link, then try the signature under each Ed25519
 * key of the set (the kid is part of what is signed, so a key can only match its own codes).
 * Says nothing of scan history or reports: those need the service.
 */
export function verifyOffline(link: string, jwks: JsonWebKeySet): OfflineVerification {
  const parsed = parseDigitalLink(link);
  if (!parsed.ok) return { valid: false, reason: parsed.problem.message };
  const { gtin, serial, batch, variant, expiry, signature } = parsed.link;
  if (serial === undefined) return { valid: false, reason: 'The link has no serial number (/21/).' };
  const keys = jwks.keys.filter((key) => key.kty === 'OKP' && key.crv === 'Ed25519' && key.x && key.kid);
  if (keys.length === 0) return { valid: false, reason: 'The key set holds no Ed25519 key.' };
  for (const key of keys) {
    const publicKey = Buffer.from(key.x as string, 'base64url');
    if (publicKey.length !== 32) continue;
    const fields = { kid: key.kid as string, gtin, serial, batch, variant, expiry };
    if (verifyCodeSignature(ed25519PublicKeyObject(publicKey), fields, signature ?? '')) {
      return { valid: true, kid: key.kid as string, environment: key.hallmark_environment, gtin, serial, batch, expiry };
    }
  }
  return { valid: false, reason: `The signature does not verify under any of the ${keys.length} keys of the set.` };
}
