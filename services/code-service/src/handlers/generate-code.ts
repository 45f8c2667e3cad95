import type { SigningKeyring } from '@hallmark/accounts';
import { signedMessage, validateGenerateRequest, yymmddToIsoDate } from '@hallmark/codes';
import { type GenerateCodeBody, type GeneratedCode, HallmarkError, type Principal } from '@hallmark/contracts';
import { randomHex, sha256Hex } from '@hallmark/crypto';
import type { EventStore } from '@hallmark/event-store';
import { formatDigitalLink } from '@hallmark/gs1';
import type { SqlDatabase } from '@hallmark/sql';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  deleteCode,
  insertCode,
  releaseIdempotencyKey,
} from '../store/code-store.ts';

export interface GenerateDeps {
  db: SqlDatabase;
  eventStore: EventStore;
  keyring: SigningKeyring;
  resolverUrl: string;
  linkOrder: 'spec' | 'gs1';
  clock: () => Date;
}

/** The event stream of one code as a compliance asset. */
export const codeStream = (assetId: string) => `code-${assetId}`;

/**
 * POST /code/generate: validate, sign with the account's active key, store (refusing a second
 * code for the same GTIN and serial with DUPLICATE_SERIAL), and append `code.generated` to the
 * code's own stream.
 */
export async function generateCode(
  deps: GenerateDeps,
  principal: Principal,
  body: GenerateCodeBody,
  requestId: string,
): Promise<GeneratedCode> {
  const now = deps.clock();
  const checked = validateGenerateRequest(body, principal.environment, now);
  if (!checked.ok) throw new HallmarkError(checked.problem.code, checked.problem.message, checked.problem.details);
  const { gtin, serial, batch, expiry, metadata, expiresAt } = checked.request;

  const key = await deps.keyring.activeSigningKey(principal);
  const signature = key.sign(signedMessage({ kid: key.kid, gtin, serial, batch, expiry })).toString('base64url');
  const url = formatDigitalLink(
    { origin: deps.resolverUrl, gtin, serial, ...(batch ? { batch } : {}), ...(expiry ? { expiry } : {}), signature },
    deps.linkOrder,
  );
  const assetId = `code_${randomHex(10)}`;
  const record = {
    assetId,
    accountId: principal.accountId,
    environment: principal.environment,
    gtin,
    serial,
    batch: batch ?? null,
    expiry: expiry ?? null,
    kid: key.kid,
    signature,
    url,
    metadata,
    createdAt: now,
    expiresAt,
  };
  if (!(await insertCode(deps.db, record))) {
    throw new HallmarkError('DUPLICATE_SERIAL', `This account already has a code for GTIN ${gtin} with serial ${serial}.`, {
      gtin,
      serial,
    });
  }
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
  try {
    await deps.eventStore.append(
      codeStream(assetId),
      [
        {
          type: 'code.generated',
          data: { ...generated, accountId: principal.accountId, environment: principal.environment, metadata },
          metadata: { requestId },
        },
      ],
      { expectedVersion: 0 },
    );
  } catch (error) {
    // Without its event the code would have no history: take it back so a retry can succeed.
    await deleteCode(deps.db, assetId);
    throw error;
  }
  return generated;
}

const pendingWaitMs = 5_000;

/**
 * With an Idempotency-Key: the first request runs; a retry of the same request gets the first
 * answer (not DUPLICATE_SERIAL); the same key with another body is a CONFLICT.
 */
export async function generateCodeIdempotently(
  deps: GenerateDeps,
  principal: Principal,
  body: GenerateCodeBody,
  idempotencyKey: string,
  requestId: string,
): Promise<GeneratedCode> {
  const requestHash = sha256Hex(JSON.stringify(body));
  const deadline = Date.now() + pendingWaitMs;
  for (;;) {
    const claim = await claimIdempotencyKey(deps.db, principal, idempotencyKey, requestHash);
    switch (claim.kind) {
      case 'claimed':
        try {
          const generated = await generateCode(deps, principal, body, requestId);
          await completeIdempotencyKey(deps.db, principal, idempotencyKey, generated);
          return generated;
        } catch (error) {
          await releaseIdempotencyKey(deps.db, principal, idempotencyKey);
          throw error;
        }
      case 'replay':
        return claim.response;
      case 'mismatch':
        throw new HallmarkError('CONFLICT', 'This Idempotency-Key was used with a different request body.', { idempotencyKey });
      case 'pending':
        if (Date.now() > deadline) {
          throw new HallmarkError('CONFLICT', 'A request with this Idempotency-Key is still being processed; retry shortly.', {
            idempotencyKey,
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
