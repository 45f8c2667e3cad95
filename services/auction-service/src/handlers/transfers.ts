import { createHmac, timingSafeEqual } from 'node:crypto';
import { HallmarkError, type InitiateTransferBody, type Principal } from '@hallmark/contracts';
import { randomHex } from '@hallmark/crypto';
import { isVersionConflict, type StoredEvent } from '@hallmark/event-store';
import { appendToAssetHistory } from '@hallmark/provenance';
import type { SqlExecutor } from '@hallmark/sql';
import {
  type CodeCheck,
  type DomainError,
  decide,
  evolve,
  isDomainError,
  isPrivateTransferEvent,
  lockedAfterWrongCodes,
  lockedWithoutTry,
  maxCodeAttempts,
  type TransferCommand,
  type TransferEvent,
} from '../domain/transfer.ts';
import { foldObjectHistory, type ObjectState } from '../object-history.ts';
import { type ObjectRepositoryDeps, requireOwnedHistory } from '../object-repository.ts';
import { eventIdOf, idSeedOf } from '../request-ids.ts';
import { saveObject } from '../store/object-store.ts';
import {
  findTransfer,
  insertTransferSecret,
  returnCodeTry,
  saveTransferStatus,
  takeCodeTry,
  transferRowsOf,
} from '../store/transfer-store.ts';

export interface TransferDeps extends ObjectRepositoryDeps {
  /** Keys the codes' HMAC; derived from the master key, so a copy of the database alone cannot test codes. */
  codeKey: Buffer;
}

const codeHash = (key: Buffer, transferId: string, code: string) =>
  createHmac('sha256', key).update(`${transferId}:${code}`).digest('hex');

/**
 * A transfer's 6-digit code: a MAC of its id under the code key, so the code is as unguessable as
 * a random one to anyone without the master key, and the same every time it is worked out: a
 * retried initiation whose first answer was lost answers the code the transfer already has.
 */
export function transferCodeOf(key: Buffer, transferId: string): string {
  const mac = createHmac('sha256', key).update(`hallmark:transfer-code:${transferId}`).digest();
  return (mac.readUIntBE(0, 6) % 1_000_000).toString().padStart(6, '0');
}

/**
 * With an Idempotency-Key, the transfer's id comes from it and the request (object and terms), so a
 * retry finds the transfer it made, and the key used again for another object or other terms (after
 * the gateway forgot it, or released it after a failed answer) starts a transfer of its own.
 */
export function transferIdOf(requestKey: string | undefined, body: InitiateTransferBody): string {
  if (!requestKey) return `trf_${randomHex(10)}`;
  return `trf_${idSeedOf('transfer', requestKey, body).toString('hex').slice(0, 20)}`;
}

const toHallmarkError = (refusal: DomainError) => new HallmarkError(refusal.code, refusal.message, refusal.details);

interface Loaded {
  state: ObjectState;
  events: StoredEvent[];
}

/** The object's state: its stream folded, plus the private half (wrong attempts) from the transfer rows. */
async function loadTransfers(deps: TransferDeps, owner: Principal, idOrSerial: string): Promise<Loaded> {
  const { state, events } = await requireOwnedHistory(deps, owner, idOrSerial);
  let withAttempts = state;
  for (const row of await transferRowsOf(deps.db, state.id)) {
    if (row.attempts > 0 && state.transfers.has(row.id)) {
      withAttempts = evolve(withAttempts, {
        type: 'transfer_code_rejected',
        data: { transferId: row.id, attempts: row.attempts },
      });
    }
  }
  return { state: withAttempts, events };
}

/** The read models from the folded state; version-guarded, so replays and late writers are harmless. */
async function saveReadModels(sql: SqlExecutor, state: ObjectState, now: Date): Promise<void> {
  await saveObject(sql, state, now);
  for (const transfer of state.transfers.values()) await saveTransferStatus(sql, transfer, now);
}

/**
 * Load, decide, record, update the read models. Private events (wrong attempts) were counted in the
 * transfer row before the decision (confirmTransfer, with the try it took), so only the public ones
 * are written: appended to the object's stream at the version decided on, with the read models (and
 * `alsoWrite`, e.g. a new transfer's secret row) in the append's transaction. An append losing the
 * race means another request changed the object: decide again (a few times, then 409). A refusal is
 * an answer; the read models are repaired on the way (from rows written before read models moved
 * into the append's transaction).
 */
async function settle(
  deps: TransferDeps,
  owner: Principal,
  idOrSerial: string,
  command: TransferCommand,
  alsoWrite?: (sql: SqlExecutor, state: ObjectState, events: readonly TransferEvent[]) => Promise<void>,
): Promise<{ events: TransferEvent[]; state: ObjectState }> {
  for (let attempt = 1; ; attempt += 1) {
    const { state, events: history } = await loadTransfers(deps, owner, idOrSerial);
    const decision = decide(command, state);
    if (isDomainError(decision)) {
      await saveReadModels(deps.db, state, deps.clock());
      throw toHallmarkError(decision);
    }
    try {
      const inputs = decision.filter((event) => !isPrivateTransferEvent(event));
      const afterAppending = (appended: readonly StoredEvent[]) =>
        decision.filter(isPrivateTransferEvent).reduce(evolve, foldObjectHistory([...history, ...appended]) as ObjectState);
      if (inputs.length === 0) {
        const after = afterAppending([]);
        await saveReadModels(deps.db, after, deps.clock());
        return { events: decision, state: after };
      }
      // The state after the append, folded once, in the append's transaction (the read models' write).
      let after: ObjectState | undefined;
      await appendToAssetHistory(deps.eventStore, { assetId: state.id, owner }, inputs, {
        now: deps.clock,
        expectedVersion: state.version,
        readModels: {
          db: deps.db,
          async write(sql, result) {
            await alsoWrite?.(sql, state, decision);
            after = afterAppending(result.events);
            await saveReadModels(sql, after, deps.clock());
          },
        },
      });
      if (!after) throw new Error('The transfer’s append wrote no read models.');
      return { events: decision, state: after };
    } catch (error) {
      if (!isVersionConflict(error)) throw error;
      if (attempt >= 20) throw new HallmarkError('CONFLICT', 'The transfer kept changing; try again.', {}, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * attempt)));
    }
  }
}

/**
 * POST /auction/transfers/initiate: 201 with a 6-digit code, valid 72 hours. An open transfer that
 * has expired no longer holds the object: it is recorded as expired and the new one starts. The
 * code's HMAC is stored in the start's transaction, so no started transfer lacks one. With an
 * Idempotency-Key (`requestKey`) the transfer's id is derived from it and the request: a retry whose
 * first answer was lost finds its transfer still pending with the same terms and answers it again,
 * code and all. An id whose row exists already (never this object's open transfer, which the
 * decision would have found) is 409 CONFLICT, and the start is rolled back with it.
 */
export async function initiateTransfer(deps: TransferDeps, owner: Principal, body: InitiateTransferBody, requestKey?: string) {
  const transferId = transferIdOf(requestKey, body);
  const transferCode = transferCodeOf(deps.codeKey, transferId);
  const now = deps.clock();
  const { state } = await settle(
    deps,
    owner,
    body.objectId,
    {
      type: 'StartTransfer',
      now,
      transferId,
      fromOwnerId: body.fromOwnerId,
      toOwnerId: body.toOwnerId,
      salePrice: body.salePrice,
      saleCurrency: body.saleCurrency,
    },
    async (sql, object, decided) => {
      const started = decided.find((event) => event.type === 'transfer_initiated');
      if (!started) return;
      const stored = await insertTransferSecret(sql, owner, {
        id: transferId,
        objectId: object.id,
        fromOwnerId: body.fromOwnerId,
        toOwnerId: body.toOwnerId,
        salePrice: body.salePrice,
        saleCurrency: body.saleCurrency,
        codeHash: codeHash(deps.codeKey, transferId, transferCode),
        expiresAt: started.data.expiresAt,
        createdAt: now,
      });
      if (!stored) {
        const message = `Transfer ${transferId} exists already; start the transfer with another Idempotency-Key.`;
        throw new HallmarkError('CONFLICT', message, { transferId });
      }
    },
  );
  const transfer = state.transfers.get(transferId);
  if (!transfer) throw new Error(`Transfer ${transferId} was decided but is not in the object's state.`);
  return { transferId, transferCode, expiresAt: transfer.expiresAt, status: 'pending' as const };
}

/**
 * POST /auction/transfers/{transferId}/cancel: the seller ends a pending transfer (a buyer who
 * backed out, a code sent to the wrong person); its code completes nothing from then on, and the
 * object is free for a new transfer. `transfer_cancelled` is appended at the stream version it was
 * decided on, so of a cancel and a right code racing exactly one wins. Cancelling a cancelled
 * transfer answers the same; an ended one is 409 with its status (one that had expired, or taken its
 * fifth wrong code, without the event recorded has that recorded instead).
 */
export async function cancelTransfer(deps: TransferDeps, owner: Principal, transferId: string) {
  const row = await findTransfer(deps.db, owner, transferId);
  if (!row) throw new HallmarkError('NOT_FOUND', `Transfer ${transferId} was not found.`, { transferId });
  const { events, state } = await settle(deps, owner, row.object_id, {
    type: 'CancelTransfer',
    transferId,
    now: deps.clock(),
  });
  const ended = events.find((event) => event.type === 'transfer_expired' || event.type === 'transfer_locked');
  if (ended) {
    const status = ended.type === 'transfer_expired' ? 'expired' : 'locked';
    throw new HallmarkError('CONFLICT', `The transfer has ended (${status}); there is nothing to cancel.`, { status });
  }
  return {
    transferId,
    status: 'cancelled' as const,
    objectId: state.id,
    serial: state.serial,
    objectStatus: state.status,
  };
}

/** A completed transfer's answer: the object as the sale left it. */
function completedView(transferId: string, state: ObjectState, completedAt: string) {
  return {
    transferId,
    status: 'completed' as const,
    objectId: state.id,
    serial: state.serial,
    objectStatus: state.status,
    completedAt,
  };
}

/**
 * POST /auction/transfers/{transferId}/confirm. The code's HMAC is checked here and counts only
 * with one of the transfer's five tries, taken in the row in one statement (a wrong code is counted
 * in it too): however many confirms arrive at once, no more than five codes are acted on, and a
 * confirm without a try is refused as locked whatever its code. The finding enters the decision
 * as a `CodeCheck`. A wrong code costs an attempt (400 with attempts left); the fifth locks the
 * transfer. The right code appends `sold` and `transferred` at the stream version it was decided on,
 * so of two confirms racing exactly one completes and the other finds it completed; a right code
 * that does not complete the transfer gives its try back.
 */
export async function confirmTransfer(
  deps: TransferDeps,
  owner: Principal,
  transferId: string,
  code: string,
  requestKey?: string,
) {
  const row = await findTransfer(deps.db, owner, transferId);
  if (!row) throw new HallmarkError('NOT_FOUND', `Transfer ${transferId} was not found.`, { transferId });
  const expected = Buffer.from(row.code_hash, 'hex');
  const given = Buffer.from(codeHash(deps.codeKey, transferId, code), 'hex');
  const codeMatches = expected.length === given.length && timingSafeEqual(expected, given);
  // With an Idempotency-Key the sale's `transferred` event takes an id derived from it: a retry whose
  // first attempt sold the object (its answer a 503: the service was slow, a gateway died) finds that
  // sale and answers it, taking no try, where it met the completed transfer's 409. Only with the right
  // code: the key never stands in for it (once the gateway has forgotten the key, or after a 503, a
  // wrong code sent with it is the completed transfer's 409).
  const eventId = requestKey ? eventIdOf('transfer-confirm', requestKey, { transferId }) : undefined;
  const soldByThisRequest = async () => {
    if (!eventId || !codeMatches) return undefined;
    const { state } = await requireOwnedHistory(deps, owner, row.object_id);
    const sale = state.records.find((record) => record.eventId === eventId);
    return sale ? completedView(transferId, state, sale.occurredAt) : undefined;
  };
  const madeBefore = await soldByThisRequest();
  if (madeBefore) return madeBefore;
  const taken = await takeCodeTry(deps.db, transferId, !codeMatches, maxCodeAttempts);
  const now = deps.clock();
  // Refused from the row alone when it shows the decider's answer (lockedWithoutTry), without loading the history.
  const refusedFromRow = !taken.taken && taken.row ? lockedWithoutTry(taken.row, now) : undefined;
  if (refusedFromRow) throw toHallmarkError(refusedFromRow);
  const check: CodeCheck = !taken.taken
    ? { result: 'untried' }
    : codeMatches
      ? { result: 'matches' }
      : { result: 'wrong', attempts: taken.attempts };
  const giveTryBack = () => (check.result === 'matches' ? returnCodeTry(deps.db, transferId) : Promise.resolve());
  let settled: Awaited<ReturnType<typeof settle>>;
  try {
    settled = await settle(deps, owner, row.object_id, {
      type: 'ConfirmTransfer',
      transferId,
      code: check,
      now,
      ...(eventId ? { eventId } : {}),
    });
  } catch (error) {
    await giveTryBack();
    // The transfer completed meanwhile: by this request's first attempt, still running when it came?
    const sold = error instanceof HallmarkError && error.details?.status === 'completed' ? await soldByThisRequest() : undefined;
    if (sold) return sold;
    throw error;
  }
  const { events, state } = settled;
  const completed = events.some((event) => event.type === 'transferred');
  if (!completed) await giveTryBack();

  if (completed) return completedView(transferId, state, now.toISOString());
  const expiredEvent = events.find((event) => event.type === 'transfer_expired');
  if (expiredEvent) {
    throw new HallmarkError('GONE', 'The transfer code has expired; start a new transfer.', {
      expiresAt: expiredEvent.data.expiresAt,
    });
  }
  const rejected = events.find((event) => event.type === 'transfer_code_rejected');
  if (rejected) {
    const remaining = Math.max(0, maxCodeAttempts - rejected.data.attempts);
    throw new HallmarkError(
      'VALIDATION_ERROR',
      remaining > 0 ? `Wrong transfer code; ${remaining} attempts left.` : 'Wrong transfer code; the transfer is now locked.',
      {
        fields: [{ field: 'transferCode', in: 'body', message: 'is not this transfer’s code' }],
        attemptsRemaining: remaining,
        locked: remaining === 0,
      },
    );
  }
  // Only a lock recorded late is left (a fifth wrong code whose lock was cut off).
  throw toHallmarkError(lockedAfterWrongCodes());
}
