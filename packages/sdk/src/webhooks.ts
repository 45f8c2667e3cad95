/**
 * Checks a webhook message the API sent (docs/WEBHOOKS.md; Standard Webhooks): the
 * `webhook-signature` header holds `v1,<base64 HMAC-SHA256>` under each live `whsec_` secret and
 * `v1a,<base64 Ed25519>` under the account's signing key of the message's environment
 * (`webhook-key-id` names it in /.well-known/jwks.json); both sign
 * `<webhook-id>.<webhook-timestamp>.<body>`. WebCrypto only, so it
 * runs in Node 20 and in browsers and workers alike.
 */
import { HallmarkError } from './errors.ts';

export class WebhookVerificationError extends HallmarkError {
  override name = 'WebhookVerificationError';
}

/** A published key as /.well-known/jwks.json lists it (the members this check reads). */
export interface WebhookPublicKey {
  kid?: string;
  kty?: string;
  crv?: string;
  x?: string;
  hallmark_account?: string;
  hallmark_environment?: string;
  /** `signing` (the service holds it) or `public` (registered by an account, which holds its private half). */
  hallmark_key_type?: string;
  /** A signing key rotated out: when it stopped signing (ISO 8601). */
  hallmark_retired_at?: string;
}

/**
 * Whether a signing key may have signed a message sent at `seconds` (Unix): not when it was rotated
 * out (`hallmark_retired_at`) more than a minute before, the time replicas take to learn of a
 * rotation, with room. The service signs with the active key only, so a later message under a
 * retired key was signed by whoever took it: rotating the key contains it.
 */
function signedBeforeRetirement(key: WebhookPublicKey, seconds: number): boolean {
  // Read as @hallmark/client's retiredAtMs reads it; the SDK's main entry runs without that package.
  const retiredAt = key.hallmark_retired_at;
  if (retiredAt === undefined) return true;
  const retiredMs =
    typeof retiredAt === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(retiredAt)
      ? Date.parse(retiredAt)
      : Number.NaN;
  return !Number.isNaN(retiredMs) && seconds * 1000 <= retiredMs + 60_000;
}

export interface WebhookVerificationOptions {
  /** The endpoint's `whsec_` secret, or several during a rotation: checks the `v1` signatures. */
  secret?: string | readonly string[];
  /**
   * The API's key set (`hallmark.keys.jwks()`): checks the `v1a` signature of the key `webhook-key-id`
   * names, which must be a signing key of `accountId` in the message's `environment`.
   */
  jwks?: { keys: readonly WebhookPublicKey[] };
  /** Required with `jwks`: your account, whose signing key must have signed (the key's `hallmark_account`). */
  accountId?: string;
  /**
   * Required with `jwks`: the environment your endpoint is registered in. The message and the key
   * must both be of it: else a test endpoint (a test key suffices to make one) aimed at your live
   * receiver would deliver test messages that the test signing key signed correctly.
   */
  environment?: 'live' | 'test';
  /** How far `webhook-timestamp` may be from now, in seconds: 0 or more. Default 300. */
  toleranceSeconds?: number;
  /** Milliseconds since the epoch (tests). */
  now?: number;
}

/** The message as sent: `{ type, timestamp, environment, data }` (docs/WEBHOOKS.md has each type's data). */
export interface WebhookMessage {
  type: string;
  timestamp: string;
  environment?: string;
  data: Record<string, unknown>;
  [field: string]: unknown;
}

type HeaderSource = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(' ') : (value as string | undefined);
}

const encoder = new TextEncoder();

/** Base64 as the API writes it: the standard alphabet, padded. `atob` also takes it unpadded or with spaces, which Python's check refuses. */
const canonicalBase64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!canonicalBase64.test(text)) return undefined;
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
    return bytes;
  } catch {
    return undefined;
  }
}

/**
 * The HMAC key a `whsec_` secret holds. An empty one is refused: anyone can compute a signature
 * under an empty key, so it would let every forged message through.
 */
function secretKey(secret: string): Uint8Array<ArrayBuffer> {
  const keyBytes =
    typeof secret === 'string' ? fromBase64(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret) : undefined;
  if (!keyBytes) throw new WebhookVerificationError('The secret is not a whsec_ secret (base64 after the prefix).');
  if (keyBytes.length === 0) {
    throw new WebhookVerificationError('The secret is empty: give the endpoint’s whsec_ secret (an unset variable reads as "").');
  }
  return keyBytes;
}

/** The tolerance asked for, or the reason it is refused: NaN would accept any age, a negative one nothing. */
function checkedTolerance(toleranceSeconds: number | undefined): number {
  const tolerance = toleranceSeconds ?? 300;
  if (typeof tolerance !== 'number' || !(tolerance >= 0)) {
    throw new WebhookVerificationError(`toleranceSeconds must be a number of seconds, 0 or more (got ${String(tolerance)}).`);
  }
  return tolerance;
}

/**
 * The `version,signature` entries of a webhook-signature header. They are separated by whitespace;
 * where a `Headers` object joined two header lines (`Headers.get`) a comma comes before it too, and
 * since base64 holds no comma, a comma that ends an entry is the join's, not the signature's.
 */
function signatureEntries(header: string): string[] {
  return header
    .split(/\s+/)
    .map((entry) => entry.replace(/,+$/, ''))
    .filter((entry) => entry !== '')
    .slice(0, maxSignatureEntries);
}

/**
 * Entries of a webhook-signature header looked at: the API sends at most three (two v1 during a
 * secret's rotation, one v1a). Each costs a signature check, so a forged header of 15,000 entries
 * held a receiver for seconds.
 */
const maxSignatureEntries = 8;

/** A WebCrypto key (its type is the DOM's, which this package's types leave out). */
type VerifyingKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

const hmacKey = (keyBytes: Uint8Array<ArrayBuffer>) =>
  crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);

async function ed25519Key(publicKey: WebhookPublicKey): Promise<VerifyingKey | undefined> {
  if (publicKey.kty !== 'OKP' || publicKey.crv !== 'Ed25519' || typeof publicKey.x !== 'string') return undefined;
  return crypto.subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x: publicKey.x }, { name: 'Ed25519' }, false, ['verify']);
}

/** The body as JSON, or the reason it is not (answered once the signatures are checked). */
function parsedOrError(body: string): WebhookMessage | WebhookVerificationError {
  try {
    return JSON.parse(body) as WebhookMessage;
  } catch (cause) {
    return new WebhookVerificationError('The signed body is not JSON.', { cause });
  }
}

/**
 * Checks a message's signatures and timestamp and returns the parsed message. `payload` is the body
 * exactly as received (the raw text or bytes, not re-serialised JSON). With `secret`, a `v1` must
 * verify under one of the secrets; with `jwks`, the `v1a` must verify under the key
 * `webhook-key-id` names, and that key must be a signing key (`hallmark_key_type`) of `accountId`
 * in `environment`, not retired more than a minute before the message's timestamp, which must also be the message's, as the service signs: not a key an account
 * registered (its private half is outside the service) nor one of the other environment. With
 * both, both must. Throws `WebhookVerificationError` otherwise, when `jwks` comes without
 * `accountId` and `environment`, for an empty secret or a tolerance that is not 0 or more, or when
 * the timestamp is further than the tolerance from now.
 */
export async function verifyWebhook(
  payload: string | Uint8Array,
  headers: HeaderSource,
  options: WebhookVerificationOptions,
): Promise<WebhookMessage> {
  const secrets = options.secret === undefined ? [] : typeof options.secret === 'string' ? [options.secret] : options.secret;
  if (secrets.length === 0 && !options.jwks) {
    throw new WebhookVerificationError('verifyWebhook needs the endpoint’s secret, the key set (jwks), or both.');
  }
  const secretKeys = secrets.map(secretKey);
  const toleranceSeconds = checkedTolerance(options.toleranceSeconds);
  if (options.jwks && options.accountId === undefined) {
    // Without it any tenant's key would do: every account's keys are in the one published set.
    throw new WebhookVerificationError(
      'verifyWebhook needs accountId with jwks: your account id, whose signing key must have signed the v1a signature.',
    );
  }
  if (options.jwks && options.environment !== 'live' && options.environment !== 'test') {
    throw new WebhookVerificationError(
      'verifyWebhook needs environment with jwks: the environment ("live" or "test") your endpoint is registered in.',
    );
  }
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature.');
  }
  const seconds = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || !Number.isSafeInteger(seconds)) {
    throw new WebhookVerificationError('webhook-timestamp is not Unix seconds.');
  }
  if (Math.abs((options.now ?? Date.now()) - seconds * 1000) > toleranceSeconds * 1000) {
    throw new WebhookVerificationError(`webhook-timestamp is more than ${toleranceSeconds} s from now.`);
  }
  // What was signed is the bytes as received: decoded first, a BOM and bytes that are not UTF-8 were
  // dropped or replaced, so bytes the API never sent verified. Decoded for JSON only, strictly.
  const bytes = typeof payload === 'string' ? encoder.encode(payload) : payload;
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const content = new Uint8Array(prefix.length + bytes.length);
  content.set(prefix);
  content.set(bytes, prefix.length);
  let body: string;
  try {
    body = typeof payload === 'string' ? payload : new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(payload);
  } catch {
    body = '';
  }
  const keyId = header(headers, 'webhook-key-id');
  // The message's environment must be the one expected; the key is then looked for in it.
  const message = parsedOrError(body);
  // compliance-service writes its endpoint's environment into every payload: it must be the one expected.
  const messageEnvironment = message instanceof WebhookVerificationError ? undefined : message?.environment;
  const environment = options.jwks && messageEnvironment === options.environment ? options.environment : undefined;
  const publicKey =
    keyId === undefined || environment === undefined
      ? undefined
      : options.jwks?.keys.find(
          (key) =>
            key.kid === keyId &&
            key.hallmark_account === options.accountId &&
            key.hallmark_key_type === 'signing' &&
            key.hallmark_environment === environment &&
            signedBeforeRetirement(key, seconds),
        );
  let v1 = false;
  let v1a = false;
  // Each key imported once, when an entry needs it.
  let hmacKeys: Promise<VerifyingKey[]> | undefined;
  let verifyingKey: Promise<VerifyingKey | undefined> | undefined;
  for (const entry of signatureEntries(signatures)) {
    const comma = entry.indexOf(',');
    const version = entry.slice(0, comma);
    const signature = comma > 0 ? fromBase64(entry.slice(comma + 1)) : undefined;
    if (!signature) continue;
    if (version === 'v1') {
      hmacKeys ??= Promise.all(secretKeys.map(hmacKey));
      // subtle.verify compares in constant time.
      for (const key of await hmacKeys) v1 ||= await crypto.subtle.verify('HMAC', key, signature, content);
    } else if (version === 'v1a' && publicKey) {
      verifyingKey ??= ed25519Key(publicKey);
      const key = await verifyingKey;
      if (key) v1a ||= await crypto.subtle.verify({ name: 'Ed25519' }, key, signature, content);
    }
  }
  if (secrets.length > 0 && !v1) {
    throw new WebhookVerificationError(
      'No signature matches: no v1 signature under these secrets; the message was not sent by this API to this endpoint, or was changed.',
    );
  }
  if (options.jwks && !v1a) {
    throw new WebhookVerificationError(
      publicKey
        ? `No signature matches: no v1a signature verifies under key ${keyId}; the message was changed.`
        : `No signature matches: the message is not of environment ${options.environment}, or the key set has no signing key ${keyId ?? '(no webhook-key-id)'} of account ${options.accountId} in it; the message was not sent by this API for this account and environment.`,
    );
  }
  if (message instanceof WebhookVerificationError) throw message;
  return message;
}
