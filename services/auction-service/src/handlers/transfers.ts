import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { HallmarkError, type InitiateTransferBody, type Principal } from '@hallmark/contracts';
import { randomHex } from '@hallmark/crypto';
import { isVersionConflict, type StoredEvent } from '@hallmark/event-store';
import { appendToAssetHistory } from '@hallmark/provenance';
import {
  type DomainError,
  decide,
  evolve,
  isDomainError,
  isPrivateTransferEvent,
  maxCodeAttempts,
  type TransferCommand,
  type TransferEvent,
} from '../domain/transfer.ts';
import { foldObjectHistory, type ObjectState } from '../object-history.ts';
import { type ObjectRepositoryDeps, requireOwnedHistory } from '../object-repository.ts';
import { saveObject } from '../store/object-store.ts';
import {
  deleteTransferSecret,
  findTransfer,
  insertTransferSecret,
  recordAttempts,
  saveTransferStatus,
  transferRowsOf,
} from '../store/transfer-store.ts';

export interface TransferDeps extends ObjectRepositoryDeps {
  /** Keys the codes' HMAC; derived from the master key, so a copy of the database alone cannot test codes. */
  codeKey: Buffer;
}

const codeHash = (key: Buffer, transferId: string, code: string) =>
  createHmac('sha256', key).update(`${transferId}:${code}`).digest('hex');

const toHallmarkError = (refusal: DomainError) => new HallmarkError(refusal.code, refusal.message, refusal.details);

/** Another confirm counted a wrong code between our read and our write: decide again. */
class AttemptCountMoved extends Error {}

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
async function saveReadModels(deps: TransferDeps, state: ObjectState): Promise<void> {
  const now = deps.clock();
  await saveObject(deps.db, state, now);
  for (const transfer of state.transfers.values()) await saveTransferStatus(deps.db, transfer, now);
}

/**
 * Load, decide, record, update the read models. Private events (wrong attempts) go to the transfer
 * row with a compare-and-set; the rest are appended to the object's stream at the version decided
 * on. Either write losing a race means another request changed the transfer: decide again (a few
 * times, then 409). A refusal is an answer; the read models are repaired on the way (a change that
 * was cut off after its append shows up there).
 */
async function settle(
  deps: TransferDeps,
  owner: Principal,
  idOrSerial: string,
  command: TransferCommand,
  beforeAppend?: (state: ObjectState, events: readonly TransferEvent[]) => Promise<void>,
): Promise<{ events: TransferEvent[]; state: ObjectState }> {
  for (let attempt = 1; ; attempt += 1) {
    const { state, events: history } = await loadTransfers(deps, owner, idOrSerial);
    const decision = decide(command, state);
    if (isDomainError(decision)) {
      await saveReadModels(deps, state);
      throw toHallmarkError(decision);
    }
    try {
      for (const event of decision) {
        if (event.type !== 'transfer_code_rejected') continue;
        const seen = state.transfers.get(event.data.transferId)?.attempts ?? 0;
        if (!(await recordAttempts(deps.db, event.data.transferId, seen, event.data.attempts))) throw new AttemptCountMoved();
      }
      const inputs = decision.filter((event) => !isPrivateTransferEvent(event));
      await beforeAppend?.(state, decision);
      const appended =
        inputs.length === 0
          ? []
          : await appendToAssetHistory(deps.eventStore, { assetId: state.id, owner }, inputs, {
              now: deps.clock,
              expectedVersion: state.version,
            });
      const after = decision
        .filter(isPrivateTransferEvent)
        .reduce(evolve, foldObjectHistory([...history, ...appended]) as ObjectState);
      await saveReadModels(deps, after);
      return { events: decision, state: after };
    } catch (error) {
      const lostRace = isVersionConflict(error) || error instanceof AttemptCountMoved;
      if (!lostRace) throw error;
      if (attempt >= 20) throw new HallmarkError('CONFLICT', 'The transfer kept changing; try again.', {}, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * attempt)));
    }
  }
}

/**
 * POST /auction/transfers/initiate: 201 with a 6-digit code from the CSPRNG, shown once, valid 72
 * hours. An open transfer that has expired no longer holds the object: it is recorded as expired
 * and the new one starts.
 */
export async function initiateTransfer(deps: TransferDeps, owner: Principal, body: InitiateTransferBody) {
  const transferId = `trf_${randomHex(10)}`;
  const transferCode = randomInt(0, 1_000_000).toString().padStart(6, '0');
  const now = deps.clock();
  let secretStored = false;
  try {
    const { events } = await settle(
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
      async (state, decided) => {
        const started = decided.find((event) => event.type === 'transfer_initiated');
        // The code's hash exists before the transfer does, so no started transfer lacks one.
        if (started && !secretStored) {
          await insertTransferSecret(deps.db, owner, {
            id: transferId,
            objectId: state.id,
            fromOwnerId: body.fromOwnerId,
            toOwnerId: body.toOwnerId,
            salePrice: body.salePrice,
            saleCurrency: body.saleCurrency,
            codeHash: codeHash(deps.codeKey, transferId, transferCode),
            expiresAt: started.data.expiresAt,
            createdAt: now,
          });
          secretStored = true;
        }
      },
    );
    const started = events.find((event) => event.type === 'transfer_initiated');
    return { transferId, transferCode, expiresAt: started?.data.expiresAt ?? '', status: 'pending' as const };
  } catch (error) {
    // A refusal or a lost race means the start never reached the stream: its row names nothing.
    // Anything else (a lost connection) may have come after the append, so the row stays; a
    // left-over row is harmless, as confirms look the transfer up in the stream.
    if (secretStored && error instanceof HallmarkError) {
      await deleteTransferSecret(deps.db, transferId).catch(() => {});
    }
    throw error;
  }
}

/**
 * POST /auction/transfers/{transferId}/confirm. The code's HMAC is checked here and enters the
 * decision as `codeMatches`. A wrong code costs an attempt (400 with attempts left); the fifth
 * locks the transfer. The right code appends `sold` and `transferred` at the stream version it
 * was decided on, so of two confirms racing exactly one completes and the other finds it completed.
 */
export async function confirmTransfer(deps: TransferDeps, owner: Principal, transferId: string, code: string) {
  const row = await findTransfer(deps.db, owner, transferId);
  if (!row) throw new HallmarkError('NOT_FOUND', `Transfer ${transferId} was not found.`, { transferId });
  const expected = Buffer.from(row.code_hash, 'hex');
  const given = Buffer.from(codeHash(deps.codeKey, transferId, code), 'hex');
  const codeMatches = expected.length === given.length && timingSafeEqual(expected, given);
  const now = deps.clock();
  const { events, state } = await settle(deps, owner, row.object_id, { type: 'ConfirmTransfer', transferId, codeMatches, now });

  if (events.some((event) => event.type === 'transferred')) {
    return {
      transferId,
      status: 'completed' as const,
      objectId: state.id,
      serial: state.serial,
      objectStatus: state.status,
      completedAt: now.toISOString(),
    };
  }
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
  throw new HallmarkError('CONFLICT', `The transfer is locked after ${maxCodeAttempts} wrong codes; start a new one.`, {
    status: 'locked',
  });
}
