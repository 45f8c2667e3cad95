import {
  type ApiKeyRecord,
  type AuthenticatedKey,
  decideApiKeyCreation,
  decideApiKeyRevocation,
  newApiKeySecret,
  writeKeyIssued,
  writeKeyRevoked,
} from '@hallmark/accounts';
import type { CreateApiKeyBody, CreatedApiKey } from '@hallmark/contracts';
import type { EventStore } from '@hallmark/event-store';
import { accountStream } from '@hallmark/provenance';
import type { SqlDatabase } from '@hallmark/sql';

export interface KeyLogDeps {
  db: SqlDatabase;
  eventStore: EventStore;
}

/**
 * POST /keys for an API key: decides, then appends `key.issued` to the account's stream (of the new
 * key's environment) with the key's row written in the event's transaction, so a key is stored with
 * its audit record or not at all. The event holds the key's facts, never its secret, hash or prefix.
 */
export async function recordApiKeyCreation(
  deps: KeyLogDeps,
  creator: AuthenticatedKey,
  body: CreateApiKeyBody,
  now: Date,
): Promise<CreatedApiKey> {
  const event = decideApiKeyCreation(creator, body, now);
  const secret = newApiKeySecret(event.data.environment);
  let created: CreatedApiKey | undefined;
  await deps.eventStore.append(
    accountStream({ accountId: event.data.accountId, environment: event.data.environment }),
    [{ type: 'key.issued', data: { ...event.data } }],
    {
      expectedVersion: 'any',
      readModels: {
        db: deps.db,
        async write(sql) {
          created = await writeKeyIssued(sql, event, secret, now);
        },
      },
    },
  );
  if (!created) throw new Error('The key.issued append wrote no key row.');
  return created;
}

/**
 * POST /keys/{id}/revoke for an API key of the asker's account and environment: undefined when
 * there is none; a key revoked already answers its first revokedAt and records nothing again;
 * otherwise `key.revoked` is appended with the row's update in its transaction.
 */
export async function recordApiKeyRevocation(
  deps: KeyLogDeps,
  by: AuthenticatedKey,
  id: string,
  now: Date,
): Promise<ApiKeyRecord | undefined> {
  const owner = { accountId: by.accountId, environment: by.environment };
  const decided = await decideApiKeyRevocation(deps.db, owner, id, now, by);
  if (!decided) return undefined;
  const { event } = decided;
  if (!event) return decided.key;
  let revoked: ApiKeyRecord | undefined;
  try {
    await deps.eventStore.append(accountStream(owner), [{ type: 'key.revoked', data: { ...event.data } }], {
      expectedVersion: 'any',
      readModels: {
        db: deps.db,
        async write(sql) {
          revoked = await writeKeyRevoked(sql, owner, event);
          // A racing revocation came first: its revokedAt stands, and this event must not.
          if (revoked?.revokedAt?.toISOString() !== event.data.revokedAt) throw new RevokedMeanwhile();
        },
      },
    });
  } catch (error) {
    if (!(error instanceof RevokedMeanwhile)) throw error;
  }
  return revoked;
}

class RevokedMeanwhile extends Error {}
