import type { KeyObject } from 'node:crypto';
import { availableParallelism } from 'node:os';
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

/**
 * Whether a server checks a request's signature on its event loop rather than in libuv's thread
 * pool. With two cores or fewer, on the loop: handing one verification to a pool thread, waking it
 * and being preempted by it cost the loop more than the verification (as for signing a few codes,
 * code-service's signOnTheLoopMaxCodes); `bench:verify` on two cores, 2026-12-02, embedded: 463–487
 * against 544–596 µs of CPU a verification, 2,628–2,672 against 2,373–2,588 verifications/s. With
 * more cores, in the pool, whose threads find idle cores (the rule before; not measured here).
 */
export const verifiesOnTheEventLoop = (cores: number): boolean => cores <= 2;

const onTheEventLoop = verifiesOnTheEventLoop(availableParallelism());

/** `verifyCodeSignature` for a request being served: on the event loop or in the pool, see verifiesOnTheEventLoop. */
export async function verifyCodeSignatureForRequest(
  publicKey: KeyObject,
  fields: SignedFields,
  signature: string,
): Promise<boolean> {
  return onTheEventLoop
    ? verifyCodeSignature(publicKey, fields, signature)
    : verifyCodeSignatureInThreadPool(publicKey, fields, signature);
}
