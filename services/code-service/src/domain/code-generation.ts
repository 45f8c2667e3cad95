// Generating a code, as a decider: no I/O, no clock (time comes in the command), no keys. The
// shell checks each item's shape at the boundary (validateGenerateRequest), finds the facts the
// rules need (who may sign the GTIN, what the named metadata schema says of the metadata), and
// asks `decide` whether the code is made. Signing happens after the decision, in the shell, like
// the hash chain: the signature, the link and the key id are added to the decided event there.
//
// State is what one request has decided so far (a batch is one owner's codes made at one moment):
// the GTIN and serial pairs it has taken. A serial taken by an earlier request is a cross-stream
// rule left to the database's unique constraint on (account_id, environment, gtin, serial).

import { endOfYymmdd } from '@hallmark/codes';
import {
  type DomainError as ContractsDomainError,
  type Environment,
  isDomainError as isRefusedDecision,
} from '@hallmark/contracts';

/** How long a code made with a test key verifies. */
export const testCodeLifetimeMs = 24 * 3_600_000;

export interface CodeOwner {
  accountId: string;
  environment: Environment;
}

/** What the named metadata schema said of the item's metadata (looked up by the shell). */
export type SchemaFact =
  | { found: false; schemaId: string; schemaVersion: number | undefined }
  | { found: true; schemaId: string; version: number; isValid: boolean; errors: unknown[]; errorsTruncated?: boolean };

export interface GenerateCodeCommand {
  type: 'GenerateCode';
  now: Date;
  /** The new code's id (made by the shell: ids are not decisions). */
  assetId: string;
  gtin: string;
  serial: string;
  batch: string | undefined;
  /** AI 17, YYMMDD. */
  expiry: string | undefined;
  metadata: Record<string, unknown>;
  /** Who may sign codes of this GTIN (its owner, or the operator for a GTIN nobody owns); undefined: nobody. */
  signerAccountId: string | undefined;
  /** Present when the item names a schema. */
  schema?: SchemaFact | undefined;
}

/** A code decided on, before the shell signs it. */
export interface DecidedCode {
  assetId: string;
  gtin: string;
  serial: string;
  batch: string | undefined;
  expiry: string | undefined;
  metadata: Record<string, unknown>;
  createdAt: string;
  /** When verification starts answering EXPIRED_CODE; null: never. */
  expiresAt: string | null;
  schemaId?: string;
  schemaVersion?: number;
}

export type CodeEvent = { type: 'code.generated'; data: DecidedCode };

export interface CodeBatchState {
  owner: CodeOwner;
  /** `gtin\nserial` of every code decided in this batch. */
  taken: ReadonlySet<string>;
}

/** A refusal, as a value; the shell answers it with the same code. */
export type DomainError = ContractsDomainError<'GTIN_NOT_OWNED' | 'DUPLICATE_SERIAL' | 'VALIDATION_ERROR'>;

export const isDomainError = (decision: readonly CodeEvent[] | DomainError): decision is DomainError =>
  isRefusedDecision(decision);

const itemKey = (gtin: string, serial: string) => `${gtin}\n${serial}`;

/** A batch with nothing decided yet; `earlier`: codes of it an earlier attempt stored (a retry), whose serials it has taken. */
export const initialCodeBatch = (owner: CodeOwner, earlier: Iterable<{ gtin: string; serial: string }> = []): CodeBatchState => ({
  owner,
  taken: new Set([...earlier].map(({ gtin, serial }) => itemKey(gtin, serial))),
});

export function gtinNotOwned(gtin: string): DomainError {
  return {
    type: 'DomainError',
    code: 'GTIN_NOT_OWNED',
    message: `This account may not sign codes for GTIN ${gtin}: it was not granted to this account. The operator grants GTINs and company prefixes (POST /api/v1/accounts/{accountId}/gtins); a GTIN granted to an account is signed with that account's key, not the operator's.`,
    details: { gtin },
  };
}

export function duplicateSerial(gtin: string, serial: string): DomainError {
  return {
    type: 'DomainError',
    code: 'DUPLICATE_SERIAL',
    message: `This account already has a code for GTIN ${gtin} with serial ${serial}.`,
    details: { gtin, serial },
  };
}

/** Test codes expire 24 hours after they are made; a code with an expiry date at the end of that day; the sooner wins. */
export function expiryOf(environment: Environment, expiry: string | undefined, now: Date): Date | null {
  const deadlines = [
    ...(environment === 'test' ? [now.getTime() + testCodeLifetimeMs] : []),
    ...(expiry ? [endOfYymmdd(expiry).getTime()] : []),
  ];
  return deadlines.length === 0 ? null : new Date(Math.min(...deadlines));
}

/**
 * Decides one item: only the GTIN's signer makes its codes (GTIN_NOT_OWNED), metadata must match
 * the schema it names (VALIDATION_ERROR), and a batch takes a GTIN and serial once (DUPLICATE_SERIAL).
 */
export function decide(command: GenerateCodeCommand, state: CodeBatchState): CodeEvent[] | DomainError {
  const { gtin, serial, schema } = command;
  if (command.signerAccountId === undefined || command.signerAccountId !== state.owner.accountId) return gtinNotOwned(gtin);
  if (schema && !schema.found) {
    return {
      type: 'DomainError',
      code: 'VALIDATION_ERROR',
      message: `There is no schema ${schema.schemaId}${schema.schemaVersion ? ` version ${schema.schemaVersion}` : ''}.`,
      details: { fields: [{ field: 'schemaId', in: 'body', message: 'is not a schema of this account (or was deleted)' }] },
    };
  }
  if (schema && !schema.isValid) {
    return {
      type: 'DomainError',
      code: 'VALIDATION_ERROR',
      message: `metadata does not match schema ${schema.schemaId} version ${schema.version}.`,
      details: {
        schemaId: schema.schemaId,
        schemaVersion: schema.version,
        errors: schema.errors,
        ...(schema.errorsTruncated ? { errorsTruncated: true } : {}),
      },
    };
  }
  if (state.taken.has(itemKey(gtin, serial))) return duplicateSerial(gtin, serial);
  const expiresAt = expiryOf(state.owner.environment, command.expiry, command.now);
  return [
    {
      type: 'code.generated',
      data: {
        assetId: command.assetId,
        gtin,
        serial,
        batch: command.batch,
        expiry: command.expiry,
        metadata: command.metadata,
        createdAt: command.now.toISOString(),
        expiresAt: expiresAt?.toISOString() ?? null,
        ...(schema?.found ? { schemaId: schema.schemaId, schemaVersion: schema.version } : {}),
      },
    },
  ];
}

/**
 * Decides a whole batch, item after item, each on the state the earlier ones left: the same as
 * folding `decide` and `evolve` over the commands, without copying the taken set per item (a
 * batch of 500 would copy it 500 times on the hottest write path).
 */
export function decideBatch(commands: readonly GenerateCodeCommand[], state: CodeBatchState): Array<CodeEvent[] | DomainError> {
  const taken = new Set(state.taken);
  const running: CodeBatchState = { owner: state.owner, taken };
  return commands.map((command) => {
    const decision = decide(command, running);
    if (!isDomainError(decision)) for (const event of decision) taken.add(itemKey(event.data.gtin, event.data.serial));
    return decision;
  });
}

/** Applies one event to the batch (a new state; the old one is left as it was). */
export function evolve(state: CodeBatchState, event: CodeEvent): CodeBatchState {
  switch (event.type) {
    case 'code.generated': {
      const taken = new Set(state.taken);
      taken.add(itemKey(event.data.gtin, event.data.serial));
      return { ...state, taken };
    }
    default:
      return event.type satisfies never;
  }
}
