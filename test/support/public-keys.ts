import { ed25519PrivateKeyObject, type generateEd25519KeyPair, signKeyRegistration } from '@hallmark/crypto';

/**
 * The body of `POST /api/v1/keys` that registers `pair`'s public key for `owner` (the calling key's
 * account, and the environment the key is registered for: the body's `environment`, by default the
 * calling key's), with its proof of possession (docs/SIGNING.md, "Registering a key").
 */
export function publicKeyRegistration(
  pair: ReturnType<typeof generateEd25519KeyPair>,
  owner: { accountId: string; environment?: 'live' | 'test' },
  name = 'factory HSM',
  options: { environmentInBody?: boolean } = {},
) {
  const environment = owner.environment ?? 'live';
  return {
    name,
    publicKey: pair.publicKey.toString('base64url'),
    algorithm: 'Ed25519',
    proof: signKeyRegistration(ed25519PrivateKeyObject(pair), {
      accountId: owner.accountId,
      environment,
      publicKey: pair.publicKey,
    }),
    ...(options.environmentInBody ? { environment } : {}),
  };
}

/** The account and environment of an API key (`GET /api/v1/accounts/me`): whom a registration by that key is for. */
export async function ownerOfKey(baseUrl: string, apiKey: string): Promise<{ accountId: string; environment: 'live' | 'test' }> {
  const response = await fetch(`${baseUrl}/api/v1/accounts/me`, { headers: { 'x-api-key': apiKey } });
  const body = (await response.json()) as { account?: { id?: string }; key?: { environment?: 'live' | 'test' } };
  if (response.status !== 200 || !body.account?.id || !body.key?.environment) {
    throw new Error(`GET /accounts/me answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return { accountId: body.account.id, environment: body.key.environment };
}
