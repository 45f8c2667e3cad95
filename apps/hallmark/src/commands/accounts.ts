import { parseArgs } from 'node:util';
import { listAccounts, provisionAccount } from '@hallmark/accounts';
import { type Environment, environments, type ListedAccount, type Tier, tiers } from '@hallmark/contracts';
import { printable } from '../terminal-text.ts';
import { connectOperator } from './operator-database.ts';
import { UsageError } from './usage-error.ts';

/** A line of `accounts list`: tab-separated for people and cut, or the account's JSON with --json. */
const describeAccount = (account: ListedAccount, json: boolean | undefined) =>
  json
    ? `${JSON.stringify(account)}\n`
    : `${account.id}\t${account.tier}\t${account.createdAt}\t${printable(account.name)}${account.isOperator ? '\t(operator)' : ''}\n`;

export async function accountsCommand(args: string[], env: NodeJS.ProcessEnv, out: (text: string) => void): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'list') return listAccountsCommand(rest, env, out);
  if (action !== 'create') throw new UsageError(`unknown accounts command "${action ?? ''}" (accounts create or accounts list)`);
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      tier: { type: 'string' },
      env: { type: 'string' },
      key: { type: 'string' },
      url: { type: 'string' },
    },
  });
  if (!values.name) throw new UsageError('--name is required');
  if (!tiers.includes(values.tier as Tier)) throw new UsageError(`--tier must be one of ${tiers.join(', ')}`);
  const environment = (values.env ?? 'live') as Environment;
  if (!environments.includes(environment)) throw new UsageError('--env must be live or test');
  const target = await connectOperator(env, values);
  if (target.kind === 'server') {
    // The running product's POST /accounts, with the operator key.
    const created = await target.api.client.accounts.create({ name: values.name, tier: values.tier as Tier, environment });
    out(`account ${created.account.id} (${printable(created.account.name)}, ${created.account.tier})\n`);
    out(`API key ${created.apiKey.id}, scope *, ${environment}; shown this once:\n${created.apiKey.secret}\n`);
    return;
  }
  const { connection } = target;
  try {
    const created = await provisionAccount(connection, { name: values.name, tier: values.tier as Tier, environment }, new Date());
    out(`account ${created.account.id} (${printable(created.account.name)}, ${created.account.tier})\n`);
    out(`API key ${created.apiKey.id}, scope *, ${environment}; shown this once:\n${created.apiKey.secret}\n`);
  } finally {
    await connection.close();
  }
}

/** Every account, page by page: the running server's GET /accounts, or the database. */
async function listAccountsCommand(args: string[], env: NodeJS.ProcessEnv, out: (text: string) => void): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { json: { type: 'boolean' }, key: { type: 'string' }, url: { type: 'string' } },
  });
  const target = await connectOperator(env, values);
  if (target.kind === 'server') {
    for await (const account of target.api.client.accounts.list({ limit: 100 })) out(describeAccount(account, values.json));
    return;
  }
  let cursor: string | null = null;
  const { connection } = target;
  try {
    do {
      const page = await listAccounts(connection.db, { limit: 100, cursor: cursor ?? undefined });
      for (const account of page.accounts) {
        const { id, name, tier, isOperator } = account;
        out(describeAccount({ id, name, tier, isOperator, createdAt: account.createdAt.toISOString() }, values.json));
      }
      cursor = page.pagination.nextCursor;
    } while (cursor);
  } finally {
    await connection.close();
  }
}
