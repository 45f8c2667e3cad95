import { parseArgs } from 'node:util';
import {
  apiKeyView,
  listApiKeysOfAccount,
  parseExpiresIn,
  recordApiKeyRevocation,
  recordOperatorKeyIssue,
} from '@hallmark/accounts';
import { type ApiKeyView, broadcasts, type Environment, environments, isScope, type Scope } from '@hallmark/contracts';
import { printable } from '../terminal-text.ts';
import { CommandError } from './command-error.ts';
import { connectOperator } from './operator-database.ts';
import type { ProductApi } from './product-api.ts';
import { UsageError } from './usage-error.ts';

const options = {
  account: { type: 'string' },
  name: { type: 'string' },
  scopes: { type: 'string' },
  env: { type: 'string' },
  'expires-in': { type: 'string' },
  gtins: { type: 'string' },
  id: { type: 'string' },
  key: { type: 'string' },
  url: { type: 'string' },
  json: { type: 'boolean' },
} as const;

function environmentOf(value: string | undefined): Environment {
  const environment = (value ?? 'live') as Environment;
  if (!environments.includes(environment)) throw new UsageError('--env must be live or test');
  return environment;
}

/** `--scopes a,b,…`: known scopes, at least one. */
function scopesOption(value: string | undefined): Scope[] {
  const scopes = (value ?? '').split(',').filter(Boolean);
  const unknown = scopes.filter((scope) => !isScope(scope));
  if (scopes.length === 0 || unknown.length > 0)
    throw new UsageError(`--scopes: unknown or missing scopes ${unknown.join(', ')}`);
  return scopes as Scope[];
}

/** `--gtins a,b,…`: the GTINs the new key is restricted to (checked by the decision: check digits); none without it. */
function restrictionsOption(value: string | undefined): { restrictions?: { gtins: string[] } } {
  if (value === undefined) return {};
  const gtins = value
    .split(',')
    .map((gtin) => gtin.trim())
    .filter(Boolean);
  if (gtins.length === 0 || gtins.some((gtin) => !/^[0-9]{8,14}$/.test(gtin)))
    throw new UsageError('--gtins takes GTINs of 8 to 14 digits, separated by commas');
  return { restrictions: { gtins } };
}

export async function keysCommand(args: string[], env: NodeJS.ProcessEnv, out: (text: string) => void): Promise<void> {
  const [action, ...rest] = args;
  const { values } = parseArgs({ args: rest, options });
  if (!values.account) throw new UsageError('--account is required');
  const accountId = values.account;
  // A bad value on the command line is a usage error (exit 2), said before anything is connected.
  const expiresIn = values['expires-in'] === undefined ? undefined : parseExpiresIn(values['expires-in']);
  if (expiresIn && !expiresIn.ok) throw new UsageError(`--expires-in ${expiresIn.message}`);
  const restrictions = restrictionsOption(values.gtins);
  const target = await connectOperator(env, values);
  if (target.kind === 'server') return keysOverApi(target.api, action, values, restrictions, out);
  const { connection } = target;
  const now = new Date();
  try {
    switch (action) {
      case 'create': {
        if (!values.name) throw new UsageError('--name is required');
        const scopes = scopesOption(values.scopes);
        const key = await recordOperatorKeyIssue(
          connection,
          {
            accountId,
            environment: environmentOf(values.env),
            name: values.name,
            scopes,
            ...(values['expires-in'] ? { expiresIn: values['expires-in'] } : {}),
            ...restrictions,
          },
          now,
        );
        out(createdLine(key));
        return;
      }
      case 'list': {
        const keys = await listApiKeysOfAccount(connection.db, accountId);
        for (const key of keys.map((record) => apiKeyView(record, now))) out(describeKey(key, values.json));
        return;
      }
      case 'revoke': {
        if (!values.id) throw new UsageError('--id is required');
        const owner = { accountId, environment: environmentOf(values.env) };
        const revoked = await recordApiKeyRevocation(connection, owner, values.id, now);
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

type KeysOptions = {
  account?: string;
  name?: string;
  scopes?: string;
  env?: string;
  'expires-in'?: string;
  id?: string;
  json?: boolean;
};

/** What `keys create` prints: the key, and its secret this once. */
const createdLine = (key: ApiKeyView & { secret: string }) =>
  `API key ${key.id} (${key.scopes.join(', ')}, ${key.environment}, expires ${key.expiresAt ?? 'never'}${key.restrictions ? `, restricted to GTINs ${key.restrictions.gtins.join(', ')}` : ''}); shown this once:\n${key.secret}\n`;

/** A line of `keys list`: tab-separated for people and cut, or the key's JSON with --json. */
const describeKey = (key: ApiKeyView, json: boolean | undefined) =>
  json
    ? `${JSON.stringify(key)}\n`
    : `${key.id}\t${key.environment}\t${key.status}\t${printable(key.prefix)}\t${printable(key.name)}\t${key.scopes.join(',')}\t${key.restrictions?.gtins.join(',') ?? '-'}\n`;

/**
 * The keys commands through a running product's API (the SDK), which manages the keys of the
 * calling key's own account: --account must be that account (another account's keys need that
 * account's key, or the server stopped).
 */
async function keysOverApi(
  api: ProductApi,
  action: string | undefined,
  values: KeysOptions,
  restrictions: { restrictions?: { gtins: string[] } },
  out: (text: string) => void,
) {
  if (action !== 'create' && action !== 'list' && action !== 'revoke')
    throw new UsageError(`unknown keys command "${action ?? ''}"`);
  const own = await api.client.accounts.me();
  if (own.account.id !== values.account) {
    throw new CommandError(
      `the server at ${api.url} is running, and its API manages only the keys of the calling key's own account (${own.account.id}), ` +
        `not ${values.account}: pass that account's key with --key, or stop the server and run the command again.`,
    );
  }
  switch (action) {
    case 'create': {
      if (!values.name) throw new UsageError('--name is required');
      const scopes = scopesOption(values.scopes);
      const key = await api.client.keys.create({
        name: values.name,
        scopes,
        environment: environmentOf(values.env),
        ...(values['expires-in'] ? { expiresIn: values['expires-in'] } : {}),
        ...restrictions,
      });
      // POST /keys answers a registered public key too; with name and scopes it is an API key.
      if (!('secret' in key)) throw new CommandError(`the API answered a ${key.type} key where an API key was expected`);
      out(createdLine(key));
      return;
    }
    case 'list': {
      for await (const key of api.client.keys.list({ limit: 100, type: 'api' })) out(describeKey(key as ApiKeyView, values.json));
      return;
    }
    case 'revoke': {
      if (!values.id) throw new UsageError('--id is required');
      const revoked = await api.client.keys.revoke({ id: values.id });
      out(`revoked ${values.id} at ${revoked.revokedAt}\n`);
      return;
    }
  }
}
