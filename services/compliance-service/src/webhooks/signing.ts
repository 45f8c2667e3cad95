import { createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks secrets: `whsec_` and base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The HMAC key a `whsec_` secret stands for (the base64 part, decoded). */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/** What both signatures cover: `<webhook-id>.<webhook-timestamp>.<body>`. */
export function signedContent(id: string, timestamp: number, body: string): Buffer {
  return Buffer.from(`${id}.${timestamp}.${body}`);
}

export function signV1(secret: string, content: Buffer): string {
  return `v1,${createHmac('sha256', secretKey(secret)).update(content).digest('base64')}`;
}

export interface WebhookSigner {
  kid: string;
  sign(content: Buffer): Buffer | Promise<Buffer>;
}

/**
 * The headers of one attempt: webhook-id, webhook-timestamp (Unix seconds) and webhook-signature
 * with a `v1` HMAC-SHA256 per live secret (two during a rotation's grace period) and a `v1a`
 * Ed25519 signature under the account's signing key, whose public half is in /.well-known/jwks.json
 * under `webhook-key-id`.
 */
export async function webhookHeaders(input: {
  id: string;
  timestamp: number;
  body: string;
  secrets: readonly string[];
  signer?: WebhookSigner;
}): Promise<Record<string, string>> {
  const content = signedContent(input.id, input.timestamp, input.body);
  const signatures = input.secrets.map((secret) => signV1(secret, content));
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'Hallmark-Webhooks/1',
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestamp),
  };
  if (input.signer) {
    signatures.push(`v1a,${Buffer.from(await input.signer.sign(content)).toString('base64')}`);
    headers['webhook-key-id'] = input.signer.kid;
  }
  headers['webhook-signature'] = signatures.join(' ');
  return headers;
}
