import type { KeyObject } from 'node:crypto';
import { signEd25519, verifyEd25519, verifyEd25519InThreadPool } from '@hallmark/crypto';

/** What a code's signature covers. Host and qualifier order are not part of it. */
export interface SignedFields {
  kid: string;
  gtin: string;
  serial: string;
  batch?: string | undefined;
  /** AI 22. */
  variant?: string | undefined;
  /** AI 17, YYMMDD. */
  expiry?: string | undefined;
}

const domain = 'hallmark/code-signature/v1';

/**
 * The bytes a code's Ed25519 signature is made over (docs/SIGNING.md): UTF-8 text, one `name=value`
 * line per field in a fixed order, each line ending in a line feed, after a domain-separation line
 * and the signing key's id. Absent fields are empty. Values cannot hold a line feed (GS1 AI 82 has none).
 */
export function signedMessage(fields: SignedFields): Buffer {
  const lines = [
    domain,
    `kid=${fields.kid}`,
    `gtin=${fields.gtin}`,
    `serial=${fields.serial}`,
    `batch=${fields.batch ?? ''}`,
    `variant=${fields.variant ?? ''}`,
    `expiry=${fields.expiry ?? ''}`,
  ];
  return Buffer.from(`${lines.join('\n')}\n`, 'utf8');
}

/** The signature as it goes in the link: base64url, no padding. */
export function signCode(privateKey: KeyObject, fields: SignedFields): string {
  return signEd25519(privateKey, signedMessage(fields)).toString('base64url');
}

/** The signature's 64 bytes, or undefined when it is not canonical unpadded base64url of 64 bytes. */
function signatureBytes(signature: string): Buffer | undefined {
  const bytes = Buffer.from(signature, 'base64url');
  return bytes.length === 64 && bytes.toString('base64url') === signature ? bytes : undefined;
}

/** False for a wrong or malformed signature. */
export function verifyCodeSignature(publicKey: KeyObject, fields: SignedFields, signature: string): boolean {
  const bytes = signatureBytes(signature);
  return bytes !== undefined && verifyEd25519(publicKey, signedMessage(fields), bytes);
}

/** `verifyCodeSignature` in libuv's thread pool: for servers, where the event loop has other requests to serve. */
export async function verifyCodeSignatureInThreadPool(
  publicKey: KeyObject,
  fields: SignedFields,
  signature: string,
): Promise<boolean> {
  const bytes = signatureBytes(signature);
  return bytes !== undefined && (await verifyEd25519InThreadPool(publicKey, signedMessage(fields), bytes));
}
