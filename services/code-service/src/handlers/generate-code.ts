import type { SigningKeyring } from '@hallmark/accounts';
import { signedMessage, type ValidGenerateRequest, validateGenerateRequest, yymmddToIsoDate } from '@hallmark/codes';
import {
  type BatchItemResult,
  type ErrorData,
  GenerateCodeBody,
  type GeneratedCode,
  HallmarkError,
  type Principal,
} from '@hallmark/contracts';
import { uuidV7 } from '@hallmark/crypto';
import type { EventStore } from '@hallmark/event-store';
import { formatDigitalLink } from '@hallmark/gs1';
import { startAssetHistory } from '@hallmark/provenance';
import type { SqlDatabase } from '@hallmark/sql';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { GtinSigners } from '../gtin-signers.ts';
import { deleteCodes, insertCodes, type NewCode } from '../store/code-store.ts';
import type { SchemaCatalog } from './schemas.ts';

export interface GenerateDeps {
  schemas: SchemaCatalog;
  signers: GtinSigners;
  db: SqlDatabase;
  eventStore: EventStore;
  keyring: SigningKeyring;
  resolverUrl: string;
  linkOrder: 'spec' | 'gs1';
  clock: () => Date;
}

const itemSchema = TypeCompiler.Compile(GenerateCodeBody);

function schemaError(item: unknown): ErrorData | undefined {
  if (itemSchema.Check(item)) return undefined;
  const fields = [...itemSchema.Errors(item)].map((error) => ({
    field: error.path.replace(/^\//, '') || 'item',
    in: 'body',
    message: error.message,
  }));
  return {
    code: 'VALIDATION_ERROR',
    message: `Invalid item: check ${fields.map((field) => field.field).join(', ')}.`,
    details: { fields },
  };
}

/**
 * Generates codes: each item is checked on its own (spec codes: MISSING_REQUIRED_FIELD,
 * INVALID_GTIN, DUPLICATE_SERIAL, else VALIDATION_ERROR), the valid ones signed with the account's
 * active key, stored in one statement and their `code.generated` events written in one more.
 * Results come back in the items' order, numbered from `firstIndex`.
 */
export async function generateCodes(
  deps: GenerateDeps,
  principal: Principal,
  items: readonly unknown[],
  firstIndex: number,
  requestId: string,
): Promise<BatchItemResult[]> {
  const now = deps.clock();
  const nowMs = now.getTime();
  // One slot per item, in order; accepted items' slots are filled once they are signed.
  const results: Array<BatchItemResult | undefined> = [];
  const accepted: Array<{
    position: number;
    request: ValidGenerateRequest;
    schema?: { schemaId: string; schemaVersion: number };
  }> = [];
  const seen = new Set<string>();

  for (const [offset, item] of items.entries()) {
    const index = firstIndex + offset;
    const invalid = schemaError(item);
    if (invalid) {
      results.push({ index, error: invalid });
      continue;
    }
    const checked = validateGenerateRequest(item as GenerateCodeBody, principal.environment, now);
    if (!checked.ok) {
      results.push({ index, error: checked.problem });
      continue;
    }
    const { gtin, serial, metadata } = checked.request;
    // Only the GTIN's owner signs its codes (the operator, for a GTIN nobody owns): docs/SIGNING.md.
    const signer = await deps.signers.signerOf(principal.environment, gtin);
    if (signer?.accountId !== principal.accountId) {
      results.push({ index, error: gtinNotOwned(gtin) });
      continue;
    }
    const { schemaId, schemaVersion } = item as GenerateCodeBody;
    let usedSchema: { schemaId: string; schemaVersion: number } | undefined;
    if (schemaId !== undefined) {
      const outcome = await deps.schemas.validateForGeneration(principal, schemaId, schemaVersion, metadata);
      if (outcome.missing) {
        results.push({
          index,
          error: {
            code: 'VALIDATION_ERROR',
            message: `There is no schema ${schemaId}${schemaVersion ? ` version ${schemaVersion}` : ''}.`,
            details: { fields: [{ field: 'schemaId', in: 'body', message: 'is not a schema of this account (or was deleted)' }] },
          },
        });
        continue;
      }
      if (!outcome.isValid) {
        results.push({
          index,
          error: {
            code: 'VALIDATION_ERROR',
            message: `metadata does not match schema ${outcome.schemaId} version ${outcome.version}.`,
            details: { schemaId: outcome.schemaId, schemaVersion: outcome.version, errors: outcome.errors },
          },
        });
        continue;
      }
      usedSchema = { schemaId: outcome.schemaId, schemaVersion: outcome.version };
    }
    if (seen.has(`${gtin}\n${serial}`)) {
      results.push({ index, error: duplicateSerial(gtin, serial) });
      continue;
    }
    seen.add(`${gtin}\n${serial}`);
    accepted.push({ position: results.length, request: checked.request, ...(usedSchema ? { schema: usedSchema } : {}) });
    results.push(undefined);
  }
  if (accepted.length === 0) return filled(results);

  // All signatures at once, in the thread pool: a batch's signing (~60 µs a code) spreads over every core.
  const key = await deps.keyring.activeSigningKey(principal);
  const signatures = await Promise.all(
    accepted.map(({ request: { gtin, serial, batch, expiry } }) =>
      key.signInThreadPool(signedMessage({ kid: key.kid, gtin, serial, batch, expiry })),
    ),
  );
  const pending = accepted.map(({ position, request, schema }, offset) => {
    const { gtin, serial, batch, expiry, metadata, expiresAt } = request;
    const signature = (signatures[offset] as Buffer).toString('base64url');
    const url = formatDigitalLink(
      { origin: deps.resolverUrl, gtin, serial, ...(batch ? { batch } : {}), ...(expiry ? { expiry } : {}), signature },
      deps.linkOrder,
    );
    // Time-ordered, so the tables keyed by asset id take new codes at the end of their indexes.
    const assetId = `code_${uuidV7(nowMs).replaceAll('-', '')}`;
    const generated: GeneratedCode = {
      url,
      gtin,
      serial,
      ...(batch ? { batch } : {}),
      ...(expiry ? { expiryDate: yymmddToIsoDate(expiry) } : {}),
      signature,
      keyId: key.kid,
      assetId,
      createdAt: now.toISOString(),
      expiresAt: expiresAt?.toISOString() ?? null,
    };
    const code: NewCode = {
      assetId,
      gtin,
      serial,
      batch: batch ?? null,
      expiry: expiry ?? null,
      signature,
      url,
      metadata,
      expiresAt,
    };
    results[position] = { index: firstIndex + position, code: generated };
    return { position, code, generated, metadata, ...(schema ? { schema } : {}) };
  });

  const stored = await insertCodes(
    deps.db,
    principal,
    { kid: key.kid, createdAt: now },
    pending.map((entry) => entry.code),
  );
  const fresh = pending.filter((entry) => stored.has(entry.code.assetId));
  for (const entry of pending) {
    if (!stored.has(entry.code.assetId)) {
      results[entry.position] = {
        index: firstIndex + entry.position,
        error: duplicateSerial(entry.code.gtin, entry.code.serial),
      };
    }
  }
  try {
    await deps.eventStore.startStreams(
      fresh.map((entry) =>
        startAssetHistory(
          { assetId: entry.code.assetId, owner: principal },
          [
            {
              type: 'code.generated',
              data: { ...entry.generated, metadata: entry.metadata, ...(entry.schema ?? {}) },
              metadata: { requestId },
            },
          ],
          now.toISOString(),
        ),
      ),
    );
  } catch (error) {
    // Without their events the codes would have no history: take them back so a retry can succeed.
    await deleteCodes(
      deps.db,
      fresh.map((entry) => entry.code.assetId),
    );
    throw error;
  }
  return filled(results);
}

function filled(results: ReadonlyArray<BatchItemResult | undefined>): BatchItemResult[] {
  return results.map((result, position) => {
    if (!result) throw new Error(`generateCodes left item ${position} without a result`);
    return result;
  });
}

function gtinNotOwned(gtin: string): ErrorData {
  return {
    code: 'GTIN_NOT_OWNED',
    message: `This account may not sign codes for GTIN ${gtin}: the operator grants GTINs and company prefixes (POST /api/v1/accounts/{accountId}/gtins).`,
    details: { gtin },
  };
}

function duplicateSerial(gtin: string, serial: string): ErrorData {
  return {
    code: 'DUPLICATE_SERIAL',
    message: `This account already has a code for GTIN ${gtin} with serial ${serial}.`,
    details: { gtin, serial },
  };
}

/** POST /code/generate: a batch of one, whose error is the answer. */
export async function generateCode(
  deps: GenerateDeps,
  principal: Principal,
  body: GenerateCodeBody,
  requestId: string,
): Promise<GeneratedCode> {
  const [result] = await generateCodes(deps, principal, [body], 0, requestId);
  if (!result) throw new Error('generateCodes answered no result for one item');
  if ('error' in result) throw HallmarkError.fromData(result.error as ErrorData);
  return result.code;
}
