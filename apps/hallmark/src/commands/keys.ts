import { parseArgs } from 'node:util';
import { apiKeyView, issueApiKey, listApiKeysOfAccount, revokeApiKey } from '@hallmark/accounts';
import { broadcasts, type Environment, environments, isScope, type Scope } from '@hallmark/contracts';
import { connectOperatorDatabase } from './operator-database.ts';
import { UsageError } from './usage-error.ts';

export const keysUsage = `hallmark keys create --account <id> --name <name> --scopes <a,b,…> [--env live|test] [--expires-in 90d]
    Creates an API key; prints it once.
  hallmark keys list --account <id>
    Lists the account's API keys (never a secret).
  hallmark keys revoke --account <id> --id <key id> [--env live|test]
    Revokes a key; with HALLMARK_NATS_URL set, running gateways drop it at once.`;

const options = {
  account: { type: 'string' },
  name: { type: 'string' },
  scopes: { type: 'string' },
  env: { type: 'string' },
  'expires-in': { type: 'string' },
  id: { type: 'string' },
} as const;

function environmentOf(value: string | undefined): Environment {
  const environment = (value ?? 'live') as Environment;
  if (!environments.includes(environment)) throw new UsageError('--env must be live or test');
  return environment;
}

export async function keysCommand(args: string[], env: NodeJS.ProcessEnv, out: (text: string) => void): Promise<void> {
  const [action, ...rest] = args;
  const { values } = parseArgs({ args: rest, options });
  if (!values.account) throw new UsageError('--account is required');
  const accountId = values.account;
  const connection = await connectOperatorDatabase(env);
  const now = new Date();
  try {
    switch (action) {
      case 'create': {
        if (!values.name) throw new UsageError('--name is required');
        const scopes = (values.scopes ?? '').split(',').filter(Boolean);
        const unknown = scopes.filter((scope) => !isScope(scope));
        if (scopes.length === 0 || unknown.length > 0)
          throw new UsageError(`--scopes: unknown or missing scopes ${unknown.join(', ')}`);
        const key = await issueApiKey(
          connection.db,
          {
            accountId,
            environment: environmentOf(values.env),
            name: values.name,
            scopes: scopes as Scope[],
            ...(values['expires-in'] ? { expiresIn: values['expires-in'] } : {}),
          },
          now,
        );
        out(
          `API key ${key.id} (${key.scopes.join(', ')}, ${key.environment}, expires ${key.expiresAt ?? 'never'}); shown this once:\n${key.secret}\n`,
        );
        return;
      }
      case 'list': {
        const keys = await listApiKeysOfAccount(connection.db, accountId);
        for (const key of keys.map((record) => apiKeyView(record, now))) {
          out(`${key.id}\t${key.environment}\t${key.status}\t${key.prefix}\t${key.name}\t${key.scopes.join(',')}\n`);
        }
        return;
      }
      case 'revoke': {
        if (!values.id) throw new UsageError('--id is required');
        const revoked = await revokeApiKey(connection.db, { accountId, environment: environmentOf(values.env) }, values.id, now);
        if (!revoked) throw new UsageError(`account ${accountId} has no ${environmentOf(values.env)} key ${values.id}`);
        await connection.bus?.broadcast(broadcasts.apiKeyRevoked, { keyId: values.id });
        out(`revoked ${values.id} at ${revoked.revokedAt?.toISOString()}\n`);
        return;
      }
      default:
        throw new UsageError(`unknown keys command "${action ?? ''}"`);
    }
  } finally {
    await connection.close();
  }
}
