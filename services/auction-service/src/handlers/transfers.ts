import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { HallmarkError, type InitiateTransferBody, type Principal } from '@hallmark/contracts';
import { randomHex } from '@hallmark/crypto';
import { appendToAssetHistory } from '@hallmark/provenance';
import type { ObjectState } from '../object-history.ts';
import { changeObject, loadObject, type ObjectRepositoryDeps } from '../object-repository.ts';
import { saveObject } from '../store/object-store.ts';
import {
  claimTransfer,
  findTransfer,
  finishTransfer,
  insertTransfer,
  recordWrongCode,
  type TransferRow,
} from '../store/transfer-store.ts';

export interface TransferDeps extends ObjectRepositoryDeps {
  /** Keys the codes' HMAC; derived from the master key, so a copy of the database alone cannot test codes. */
  codeKey: Buffer;
}

const lifetimeMs = 72 * 3_600_000;
export const maxAttempts = 5;

const codeHash = (key: Buffer, transferId: string, code: string) =>
  createHmac('sha256', key).update(`${transferId}:${code}`).digest('hex');

/** POST /auction/transfers/initiate: 201 with a 6-digit code from the CSPRNG, shown once, valid 72 hours. */
export async function initiateTransfer(deps: TransferDeps, owner: Principal, body: InitiateTransferBody) {
  if (body.fromOwnerId === body.toOwnerId) {
    throw new HallmarkError('VALIDATION_ERROR', 'Invalid request: toOwnerId is the current owner.', {
      fields: [{ field: 'toOwnerId', in: 'body', message: 'must differ from fromOwnerId' }],
    });
  }
  const transferId = `trf_${randomHex(10)}`;
  const transferCode = randomInt(0, 1_000_000).toString().padStart(6, '0');
  const now = deps.clock();
  const expiresAt = new Date(now.getTime() + lifetimeMs);
  let inserted = false;
  try {
    await changeObject(deps, owner, body.objectId, async (state) => {
      if (state.ownerId !== body.fromOwnerId) {
        throw new HallmarkError('CONFLICT', 'fromOwnerId is not the object’s current owner.', { field: 'fromOwnerId' });
      }
      if (!inserted) {
        inserted = await insertTransfer(deps.db, owner, {
          id: transferId,
          objectId: state.id,
          fromOwnerId: body.fromOwnerId,
          toOwnerId: body.toOwnerId,
          salePrice: body.salePrice,
          saleCurrency: body.saleCurrency,
          codeHash: codeHash(deps.codeKey, transferId, transferCode),
          expiresAt,
          createdAt: now,
        });
        if (!inserted) throw new HallmarkError('CONFLICT', 'The object already has a pending transfer.', { objectId: state.id });
      }
      return [
        {
          type: 'transfer_initiated',
          data: {
            transferId,
            fromOwnerId: body.fromOwnerId,
            toOwnerId: body.toOwnerId,
            salePrice: body.salePrice,
            saleCurrency: body.saleCurrency,
            expiresAt: expiresAt.toISOString(),
          },
        },
      ];
    });
  } catch (error) {
    // Without its event the transfer must not exist: take it back.
    if (inserted) await deps.db.query(`DELETE FROM auction_transfers WHERE id = $1 AND status = 'pending'`, [transferId]);
    throw error;
  }
  return { transferId, transferCode, expiresAt: expiresAt.toISOString(), status: 'pending' as const };
}

function refuseUnlessPending(transfer: TransferRow, now: Date): void {
  if (transfer.status === 'completed')
    throw new HallmarkError('CONFLICT', 'The transfer is already completed.', { status: 'completed' });
  if (transfer.status === 'locked') {
    throw new HallmarkError('CONFLICT', `The transfer is locked after ${maxAttempts} wrong codes; start a new one.`, {
      status: 'locked',
    });
  }
  if (transfer.status === 'completing')
    throw new HallmarkError('CONFLICT', 'The transfer is being completed.', { status: 'completing' });
  if (new Date(transfer.expires_at).getTime() <= now.getTime()) {
    throw new HallmarkError('GONE', 'The transfer code has expired; start a new transfer.', {
      expiresAt: new Date(transfer.expires_at).toISOString(),
    });
  }
}

/**
 * POST /auction/transfers/{transferId}/confirm. A wrong code costs an attempt (400 with attempts
 * left); the fifth locks the transfer. The right code claims the transfer with one conditional
 * update, so of two confirms racing exactly one proceeds; it appends `sold` and `transferred`
 * (the `sale` custody entry) and the object becomes sold.
 */
export async function confirmTransfer(deps: TransferDeps, owner: Principal, transferId: string, code: string) {
  const transfer = await findTransfer(deps.db, owner, transferId);
  if (!transfer) throw new HallmarkError('NOT_FOUND', `Transfer ${transferId} was not found.`, { transferId });
  const now = deps.clock();
  refuseUnlessPending(transfer, now);

  const expected = Buffer.from(transfer.code_hash, 'hex');
  const given = Buffer.from(codeHash(deps.codeKey, transferId, code), 'hex');
  if (!timingSafeEqual(expected, given)) {
    const counted = await recordWrongCode(deps.db, transferId);
    if (!counted) refuseUnlessPending((await findTransfer(deps.db, owner, transferId)) as TransferRow, now);
    const remaining = Math.max(0, maxAttempts - (counted?.attempts ?? maxAttempts));
    if (counted?.status === 'locked') {
      await appendToAssetHistory(
        deps.eventStore,
        { assetId: transfer.object_id, owner },
        [{ type: 'transfer_locked', data: { transferId } }],
        {
          now: deps.clock,
        },
      );
      const state = (await loadObject(deps, transfer.object_id)) as ObjectState;
      await saveObject(deps.db, state, now);
    }
    throw new HallmarkError(
      'VALIDATION_ERROR',
      remaining > 0 ? `Wrong transfer code; ${remaining} attempts left.` : `Wrong transfer code; the transfer is now locked.`,
      {
        fields: [{ field: 'transferCode', in: 'body', message: 'is not this transfer’s code' }],
        attemptsRemaining: remaining,
        locked: remaining === 0,
      },
    );
  }

  if (!(await claimTransfer(deps.db, transferId))) {
    refuseUnlessPending((await findTransfer(deps.db, owner, transferId)) as TransferRow, now);
    throw new HallmarkError('CONFLICT', 'The transfer is being completed.', { status: 'completing' });
  }
  try {
    const { state } = await changeObject(deps, owner, transfer.object_id, (current) => {
      if (current.ownerId !== transfer.from_owner_id) {
        throw new HallmarkError('CONFLICT', 'The object changed hands since this transfer began.', { transferId });
      }
      const sale = {
        transferId,
        fromOwnerId: transfer.from_owner_id,
        toOwnerId: transfer.to_owner_id,
        salePrice: Number(transfer.sale_price),
        saleCurrency: transfer.sale_currency,
      };
      return [
        { type: 'sold', data: sale },
        { type: 'transferred', data: { transferId, fromOwnerId: sale.fromOwnerId, toOwnerId: sale.toOwnerId } },
      ];
    });
    await finishTransfer(deps.db, transferId, 'completed', now);
    return {
      transferId,
      status: 'completed' as const,
      objectId: state.id,
      serial: state.serial,
      objectStatus: state.status,
      completedAt: now.toISOString(),
    };
  } catch (error) {
    await finishTransfer(deps.db, transferId, 'pending', now);
    throw error;
  }
}
