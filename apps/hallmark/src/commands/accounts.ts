import { parseArgs } from 'node:util';
import { provisionAccount } from '@hallmark/accounts';
import { type Environment, environments, type Tier, tiers } from '@hallmark/contracts';
import { connectOperator } from './operator-database.ts';
import { UsageError } from './usage-error.ts';

export const accountsUsage = `hallmark accounts create --name <name> --tier free|starter|enterprise [--env live|test]
    Creates an account and its first API key (scope *); prints the key once. While "hallmark start"
    runs on HALLMARK_DATA_DIR, goes through its API with --key, HALLMARK_OPERATOR_KEY or <data dir>/operator-key.`;

export async function accountsCommand(args: string[], env: NodeJS.ProcessEnv, out: (text: string) => void): Promise<void> {
  const [action, ...rest] = args;
  if (action !== 'create') throw new UsageError(`unknown accounts command "${action ?? ''}"`);
  const { values } = parseArgs({
    args: rest,
    options: { name: { type: 'string' }, tier: { type: 'string' }, env: { type: 'string' }, key: { type: 'string' } },
  });
  if (!values.name) throw new UsageError('--name is required');
  if (!tiers.includes(values.tier as Tier)) throw new UsageError(`--tier must be one of ${tiers.join(', ')}`);
  const environment = (values.env ?? 'live') as Environment;
  if (!environments.includes(environment)) throw new UsageError('--env must be live or test');
  const target = await connectOperator(env, values.key);
  if (target.kind === 'server') {
    // The running server's POST /accounts, with the operator key.
    const created = await target.api.request<{
      account: { id: string; name: string; tier: string };
      apiKey: { id: string; secret: string };
    }>('POST', '/accounts', { name: values.name, tier: values.tier, environment });
    out(`account ${created.account.id} (${created.account.name}, ${created.account.tier})\n`);
    out(`API key ${created.apiKey.id}, scope *, ${environment}; shown this once:\n${created.apiKey.secret}\n`);
    return;
  }
  const { connection } = target;
  try {
    const created = await provisionAccount(connection, { name: values.name, tier: values.tier as Tier, environment }, new Date());
    out(`account ${created.account.id} (${created.account.name}, ${created.account.tier})\n`);
    out(`API key ${created.apiKey.id}, scope *, ${environment}; shown this once:\n${created.apiKey.secret}\n`);
  } finally {
    await connection.close();
  }
}
