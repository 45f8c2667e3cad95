import { createHmac, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from './webhooks.ts';

// Messages signed as compliance-service signs them (docs/WEBHOOKS.md): v1 by the reference
// Standard Webhooks library, v1a with Ed25519 over the same content. A real delivery from the
// product is checked in test/e2e/sdk.test.ts.

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const oldSecret = `whsec_${randomBytes(32).toString('base64')}`;
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const jwk = publicKey.export({ format: 'jwk' });
const published = (x: string, kid: string, members: Record<string, string> = {}) => ({
  kty: 'OKP',
  crv: 'Ed25519',
  x,
  kid,
  hallmark_account: 'acc_1',
  hallmark_environment: 'live',
  hallmark_key_type: 'signing',
  ...members,
});
// acc_1's live signing key, as /.well-known/jwks.json publishes it: what the service signs v1a with.
const jwks = { keys: [published(jwk.x as string, 'kid-1')] };
const body = JSON.stringify({
  type: 'scan.suspicious',
  timestamp: '2026-11-25T08:00:00.000Z',
  environment: 'live',
  data: { gtin: '1' },
});
const now = Date.parse('2026-11-25T08:00:00Z');
const seconds = Math.floor(now / 1000);

function headersFor(
  options: {
    secrets?: string[];
    ed25519?: boolean;
    timestamp?: number;
    id?: string;
    signer?: { kid: string; privateKey: KeyObject };
  } = {},
) {
  const id = options.id ?? 'msg_1';
  const timestamp = options.timestamp ?? seconds;
  const signer = options.signer ?? { kid: 'kid-1', privateKey };
  const signatures = (options.secrets ?? [secret]).map((each) => new Webhook(each).sign(id, new Date(timestamp * 1000), body));
  if (options.ed25519 ?? true) {
    const signature = sign(null, Buffer.from(`${id}.${timestamp}.${body}`), signer.privateKey).toString('base64');
    signatures.push(`v1a,${signature}`);
  }
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatures.join(' '),
    'webhook-key-id': signer.kid,
  };
}

describe('verifyWebhook', () => {
  it('accepts a v1 signature under the secret, and returns the message', async () => {
    const message = await verifyWebhook(body, headersFor({ ed25519: false }), { secret, now });
    expect(message).toMatchObject({ type: 'scan.suspicious', data: { gtin: '1' } });
  });

  it('accepts the v1a signature under the key the key set publishes, with no secret', async () => {
    await expect(
      verifyWebhook(body, headersFor({ secrets: [] }), { jwks, accountId: 'acc_1', environment: 'live', now }),
    ).resolves.toMatchObject({
      type: 'scan.suspicious',
    });
    await expect(
      verifyWebhook(Buffer.from(body), new Headers(headersFor({ secrets: [] })), {
        jwks,
        accountId: 'acc_1',
        environment: 'live',
        now,
      }),
    ).resolves.toBeDefined();
  });

  it('refuses a v1a signature by a signing key retired more than a minute before the message (a rotated-out, maybe stolen key)', async () => {
    const options = { accountId: 'acc_1', environment: 'live' as const, now };
    const retiredAt = (ms: number) => ({
      keys: [published(jwk.x as string, 'kid-1', { hallmark_retired_at: new Date(ms).toISOString() })],
    });
    const headers = headersFor({ secrets: [] });
    await expect(verifyWebhook(body, headers, { ...options, jwks: retiredAt(now - 61_000) })).rejects.toThrow(
      WebhookVerificationError,
    );
    await expect(verifyWebhook(body, headers, { ...options, jwks: retiredAt(now - 30_000) })).resolves.toBeDefined();
    await expect(verifyWebhook(body, headers, { ...options, jwks: retiredAt(now + 3_600_000) })).resolves.toBeDefined();
    const notATime = { keys: [published(jwk.x as string, 'kid-1', { hallmark_retired_at: 'yesterday' })] };
    await expect(verifyWebhook(body, headers, { ...options, jwks: notATime })).rejects.toThrow(WebhookVerificationError);
  });

  it('accepts a genuine message with both the secret and the key set: both signatures verify', async () => {
    await expect(
      verifyWebhook(body, headersFor(), { secret, jwks, accountId: 'acc_1', environment: 'live', now }),
    ).resolves.toMatchObject({
      type: 'scan.suspicious',
      environment: 'live',
    });
  });

  it('refuses a key set without accountId: it holds every tenant’s keys', async () => {
    await expect(verifyWebhook(body, headersFor({ secrets: [] }), { jwks, now })).rejects.toThrow(/needs accountId with jwks/);
    await expect(verifyWebhook(body, headersFor(), { secret, jwks, now })).rejects.toThrow(/needs accountId with jwks/);
    await expect(verifyWebhook(body, headersFor({ secrets: [] }), { jwks, accountId: 'acc_1', now })).rejects.toThrow(
      /needs environment with jwks/,
    );
  });

  it('refuses a test message, genuinely signed by the account’s test key, where live ones are expected', async () => {
    // A leaked test `*` key can register a test endpoint aimed at the live receiver's URL and have
    // test messages sent there: signed correctly, by the account's test signing key.
    const testKey = generateKeyPairSync('ed25519');
    const keySet = {
      keys: [
        ...jwks.keys,
        published(testKey.publicKey.export({ format: 'jwk' }).x as string, 'kid-test', { hallmark_environment: 'test' }),
      ],
    };
    const testBody = body.replace('"environment":"live"', '"environment":"test"');
    const signature = sign(null, Buffer.from(`msg_t.${seconds}.${testBody}`), testKey.privateKey).toString('base64');
    const headers = {
      'webhook-id': 'msg_t',
      'webhook-timestamp': String(seconds),
      'webhook-signature': `v1a,${signature}`,
      'webhook-key-id': 'kid-test',
    };
    await expect(
      verifyWebhook(testBody, headers, { jwks: keySet, accountId: 'acc_1', environment: 'live', now }),
    ).rejects.toThrow(/not of environment live/);
    await expect(
      verifyWebhook(testBody, headers, { jwks: keySet, accountId: 'acc_1', environment: 'test', now }),
    ).resolves.toMatchObject({
      environment: 'test',
    });
  });

  describe('a v1a forged with a key the service does not sign webhooks with', () => {
    // A public key registered with a leaked `*` key (or by the brand): its private half is outside the service.
    const registered = generateKeyPairSync('ed25519');
    const registeredX = registered.publicKey.export({ format: 'jwk' }).x as string;
    // The account's signing key of the other environment (test): the service signs live messages with the live one.
    const testKey = generateKeyPairSync('ed25519');
    const testX = testKey.publicKey.export({ format: 'jwk' }).x as string;
    const keySet = {
      keys: [
        ...jwks.keys,
        published(registeredX, 'kid-registered', { hallmark_key_type: 'public' }),
        published(testX, 'kid-test', { hallmark_environment: 'test' }),
        published(registeredX, 'kid-other-tenant', { hallmark_account: 'acc_2' }),
      ],
    };
    const forgers = [
      { kid: 'kid-registered', privateKey: registered.privateKey },
      { kid: 'kid-test', privateKey: testKey.privateKey },
      { kid: 'kid-other-tenant', privateKey: registered.privateKey },
    ];

    it.each(forgers)('is refused with the secret and the key set though the secret signed nothing ($kid)', async (signer) => {
      const headers = headersFor({ secrets: [], signer });
      await expect(
        verifyWebhook(body, headers, { secret, jwks: keySet, accountId: 'acc_1', environment: 'live', now }),
      ).rejects.toThrow(/No signature matches/);
    });

    it.each(forgers)('is refused with the key set alone ($kid)', async (signer) => {
      const headers = headersFor({ secrets: [], signer });
      await expect(verifyWebhook(body, headers, { jwks: keySet, accountId: 'acc_1', environment: 'live', now })).rejects.toThrow(
        /no signing key .* of account acc_1 in it/,
      );
    });
  });

  it('refuses a genuine v1a beside no v1 under the secret given: with both, both must verify', async () => {
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    await expect(
      verifyWebhook(body, headersFor({ secrets: [other] }), { secret, jwks, accountId: 'acc_1', environment: 'live', now }),
    ).rejects.toThrow(/no v1 signature/);
  });

  it('accepts either secret during a rotation', async () => {
    const headers = headersFor({ secrets: [oldSecret, secret], ed25519: false });
    await expect(verifyWebhook(body, headers, { secret: [secret], now })).resolves.toBeDefined();
    await expect(verifyWebhook(body, headers, { secret: oldSecret, now })).resolves.toBeDefined();
  });

  it('refuses a changed body, another secret, another account’s key, a missing header', async () => {
    const headers = headersFor();
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    await expect(
      verifyWebhook(`${body} `, headers, { secret, jwks, accountId: 'acc_1', environment: 'live', now }),
    ).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(verifyWebhook(body, headersFor({ ed25519: false }), { secret: other, now })).rejects.toThrow(/No signature/);
    await expect(
      verifyWebhook(body, headersFor({ secrets: [] }), { jwks, accountId: 'acc_2', environment: 'live', now }),
    ).rejects.toThrow(/No signature/);
    const { 'webhook-id': _id, ...withoutId } = headers;
    await expect(verifyWebhook(body, withoutId, { secret, now })).rejects.toThrow(/Missing/);
    await expect(verifyWebhook(body, headers, {})).rejects.toThrow(/needs/);
  });

  it('refuses a timestamp more than five minutes away, either way', async () => {
    await expect(verifyWebhook(body, headersFor({ timestamp: seconds - 301 }), { secret, now })).rejects.toThrow(/from now/);
    await expect(verifyWebhook(body, headersFor({ timestamp: seconds + 301 }), { secret, now })).rejects.toThrow(/from now/);
    await expect(verifyWebhook(body, headersFor({ timestamp: seconds - 299 }), { secret, now })).resolves.toBeDefined();
  });

  it('refuses an empty secret (an unset variable) with its own error, not a forgery signed under an empty key', async () => {
    // Anyone can sign under an empty key: an HMAC over the message with no key at all.
    const id = 'msg_forged';
    const content = `${id}.${seconds}.${body}`;
    const forged = createHmac('sha256', Buffer.alloc(0)).update(content).digest('base64');
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(seconds), 'webhook-signature': `v1,${forged}` };
    for (const empty of ['', 'whsec_', [secret, '']]) {
      const refused = await verifyWebhook(body, headers, { secret: empty, now }).catch((caught: unknown) => caught);
      expect(refused, JSON.stringify(empty)).toBeInstanceOf(WebhookVerificationError);
      expect(String(refused)).toMatch(/secret is empty/);
    }
  });

  it('refuses a tolerance that is not a number of seconds, 0 or more: NaN would accept any age', async () => {
    const old = headersFor({ timestamp: seconds - 10 * 365 * 24 * 3600 });
    for (const toleranceSeconds of [Number.NaN, -1, Number('300s')]) {
      await expect(verifyWebhook(body, old, { secret, toleranceSeconds, now }), String(toleranceSeconds)).rejects.toThrow(
        /toleranceSeconds must be/,
      );
    }
    await expect(verifyWebhook(body, headersFor(), { secret, toleranceSeconds: 0, now })).resolves.toBeDefined();
  });

  it('reads every signature of two webhook-signature lines that Headers joined with ", "', async () => {
    // The first line signed under the old secret, the second under the current one: Headers.get
    // answers "v1,<old>, v1,<new> v1a,<…>", the old entry followed by the join's comma.
    const [oldLine, newLine] = [oldSecret, secret].map(
      (each) => headersFor({ secrets: [each], ed25519: each === secret })['webhook-signature'],
    );
    const headers = new Headers({ 'webhook-id': 'msg_1', 'webhook-timestamp': String(seconds), 'webhook-key-id': 'kid-1' });
    headers.append('webhook-signature', oldLine as string);
    headers.append('webhook-signature', newLine as string);
    expect(headers.get('webhook-signature')).toMatch(/^v1,[^ ]+=, v1,/);
    await expect(verifyWebhook(body, headers, { secret: oldSecret, now })).resolves.toBeDefined();
    await expect(
      verifyWebhook(body, headers, { secret, jwks, accountId: 'acc_1', environment: 'live', now }),
    ).resolves.toBeDefined();
  });
});
