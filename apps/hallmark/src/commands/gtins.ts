import { parseArgs } from 'node:util';
import { listGtinClaims } from '@hallmark/accounts';
import { listOwnershipConflicts, migrateCodes, recordGtinClaim, recordGtinRevocation } from '@hallmark/code-service';
import { broadcasts, environments, type GtinClaimView } from '@hallmark/contracts';
import type { EventStore } from '@hallmark/event-store';
import { checkGtin14 } from '@hallmark/gs1';
import { connectOperator, connectOperatorDatabase, type OperatorConnection } from './operator-database.ts';
import type { ProductApi } from './product-api.ts';
import { UsageError } from './usage-error.ts';

const options = {
  account: { type: 'string' },
  gtin: { type: 'string' },
  prefix: { type: 'string' },
  env: { type: 'string' },
  id: { type: 'string' },
  key: { type: 'string' },
  url: { type: 'string' },
  json: { type: 'boolean' },
} as const;

/** A claim as one tab-separated line (docs/CLI.md: lists print tab-separated lines, as accounts and keys do). */
const describe = (claim: GtinClaimView) =>
  [claim.id, claim.kind, claim.value, claim.environment, claim.status, claim.source, claim.accountId].join('\t');

/**
 * The grant or revocation as the API makes it: an event in the account's stream with its row, in
 * one transaction (code-service's gtin-claim-log.ts); running services hear of it over the bus.
 */
async function withClaimLog<T extends GtinClaimView | undefined>(
  connection: OperatorConnection,
  change: (deps: { db: OperatorConnection['db']; eventStore: EventStore }) => Promise<{ claim: T; changed: boolean }>,
): Promise<T> {
  const { claim, changed } = await change({ db: connection.db, eventStore: connection.eventStore });
  if (claim && changed) await connection.bus?.broadcast(broadcasts.gtinOwnershipChanged, { [claim.kind]: claim.value });
  return claim;
}

export async function gtinsCommand(args: string[], env: NodeJS.ProcessEnv, out: (text: string) => void): Promise<void> {
  const [action, ...rest] = args;
  const { values } = parseArgs({ args: rest, options });
  let connection: OperatorConnection;
  if (action === 'conflicts') connection = await connectOperatorDatabase(env, 'gtins conflicts');
  else {
    // grant, list and revoke have API routes: while a server holds the embedded folder, they go through it.
    const target = await connectOperator(env, values);
    if (target.kind === 'server') return gtinsOverApi(target.api, action, values, out);
    connection = target.connection;
  }
  try {
    switch (action) {
      case 'grant': {
        if (!values.account) throw new UsageError('--account is required');
        if ((values.gtin === undefined) === (values.prefix === undefined))
          throw new UsageError('give exactly one of --gtin and --prefix');
        if (values.gtin !== undefined && !checkGtin14(values.gtin).ok)
          throw new UsageError('--gtin must be a GTIN-14 with a valid check digit');
        if (values.prefix !== undefined && !/^\d{4,12}$/.test(values.prefix))
          throw new UsageError('--prefix must be 4 to 12 digits');
        const environment = values.env ?? 'live';
        if (environment !== 'live' && environment !== 'test') throw new UsageError('--env must be live or test');
        const target =
          values.gtin !== undefined
            ? { kind: 'gtin' as const, value: values.gtin }
            : { kind: 'prefix' as const, value: values.prefix as string };
        const claim = await withClaimLog(connection, async (deps) => ({
          claim: await recordGtinClaim(
            deps,
            { accountId: values.account as string, environment, target, source: 'granted' },
            'hallmark-cli',
            new Date(),
          ),
          changed: true,
        }));
        out(`${describe(claim)}\n`);
        return;
      }
      case 'list': {
        if (!values.account) throw new UsageError('--account is required');
        let cursor: string | undefined;
        do {
          const page = await listGtinClaims(connection.db, values.account, { limit: 100, cursor });
          for (const claim of page.claims) out(values.json ? `${JSON.stringify(claim)}\n` : `${describe(claim)}\n`);
          cursor = page.pagination.nextCursor ?? undefined;
        } while (cursor);
        return;
      }
      case 'revoke': {
        if (!values.id) throw new UsageError('--id is required');
        const revoked = await withClaimLog(connection, async (deps) => {
          // The operator's own tool: any account's claim, in either environment.
          const anyClaim = { accountId: undefined, environments };
          const outcome = await recordGtinRevocation(deps, values.id as string, anyClaim, 'hallmark-cli', new Date());
          return { claim: outcome?.claim, changed: outcome?.changed ?? false };
        });
        if (!revoked) throw new UsageError(`there is no GTIN claim ${values.id}`);
        out(`${describe(revoked)}\n`);
        return;
      }
      case 'conflicts': {
        await migrateCodes(connection.db);
        const conflicts = await listOwnershipConflicts(connection.db);
        if (conflicts.length === 0) out('No GTIN waits for an owner.\n');
        for (const conflict of conflicts) out(`${conflict.gtin}  ${conflict.codes} codes of ${conflict.accountIds.join(', ')}\n`);
        return;
      }
      default:
        throw new UsageError(`unknown gtins action "${action ?? ''}"`);
    }
  } finally {
    await connection.close();
  }
}

type GtinsOptions = { account?: string; gtin?: string; prefix?: string; env?: string; id?: string; json?: boolean };

/** grant, list and revoke through the running product's API (the SDK): POST/GET /accounts/{id}/gtins, POST /gtins/{id}/revoke. */
async function gtinsOverApi(api: ProductApi, action: string | undefined, values: GtinsOptions, out: (text: string) => void) {
  switch (action) {
    case 'grant': {
      if (!values.account) throw new UsageError('--account is required');
      if ((values.gtin === undefined) === (values.prefix === undefined))
        throw new UsageError('give exactly one of --gtin and --prefix');
      const environment = values.env ?? 'live';
      if (environment !== 'live' && environment !== 'test') throw new UsageError('--env must be live or test');
      const claim = await api.client.accounts.gtins.grant({
        accountId: values.account,
        ...(values.gtin !== undefined ? { gtin: values.gtin } : { prefix: values.prefix as string }),
        environment,
      });
      out(`${describe(claim as GtinClaimView)}\n`);
      return;
    }
    case 'list': {
      if (!values.account) throw new UsageError('--account is required');
      for await (const claim of api.client.accounts.gtins.list({ accountId: values.account, limit: 100 })) {
        out(values.json ? `${JSON.stringify(claim)}\n` : `${describe(claim as GtinClaimView)}\n`);
      }
      return;
    }
    case 'revoke': {
      if (!values.id) throw new UsageError('--id is required');
      const claim = await api.client.gtins.revoke({ claimId: values.id });
      out(`${describe(claim as GtinClaimView)}\n`);
      return;
    }
    default:
      throw new UsageError(`unknown gtins action "${action ?? ''}"`);
  }
}
