// Transfers of an auction object, as a decider: no I/O, no clock (time comes in the command), no
// secrets (the shell checks the code's HMAC, having taken one of the transfer's tries, and says what
// it found). The events live in the object's stream `asset-<id>`, except `transfer_code_rejected`:
// wrong attempts are private and the shell counts them in the `auction_transfers` row, never in the
// public provenance history.

import { type DomainError as ContractsDomainError, isDomainError as isRefusedDecision, refuse } from '@hallmark/contracts';

/**
 * The ISO 4217 currencies in circulation a sale may be in (EUR, USD, CHF…), as a fixed list: read from
 * the runtime's ICU, the set followed each Node build (Node 20's ICU 78 still had withdrawn HRK, CUC,
 * SLL, ZWL and ANG, and the SDR and Sucre units XDR and XSU), so replicas on two builds could disagree
 * on one request (a review of 2026-12-07). Not test, fund or precious-metal codes such as XTS or XAU.
 */
const currencyCodes: ReadonlySet<string> = new Set(
  `AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD
   CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP
   GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD
   KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN
   NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP
   SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND
   VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG`.split(/\s+/),
);

/** How long a transfer code lives. */
export const transferLifetimeMs = 72 * 3_600_000;
/** Wrong codes a transfer takes; the last of them locks it. Also the codes it compares at most (its tries). */
export const maxCodeAttempts = 5;

export type TransferTerms = {
  transferId: string;
  fromOwnerId: string;
  toOwnerId: string;
  salePrice: number;
  saleCurrency: string;
};

export type TransferEvent =
  | { type: 'transfer_initiated'; data: TransferTerms & { expiresAt: string } }
  /** Private: stored as the transfer row's attempt count, never appended to the stream. */
  | { type: 'transfer_code_rejected'; data: { transferId: string; attempts: number } }
  | { type: 'transfer_locked'; data: { transferId: string } }
  | { type: 'transfer_expired'; data: { transferId: string; expiresAt: string } }
  | { type: 'transfer_cancelled'; data: { transferId: string } }
  | { type: 'sold'; data: TransferTerms }
  /** `eventId`: derived from the confirm's Idempotency-Key, so its retry finds the sale it made. */
  | { type: 'transferred'; data: { transferId: string; fromOwnerId: string; toOwnerId: string }; eventId?: string };

export type TransferEventType = TransferEvent['type'];
export const transferEventTypes: readonly TransferEventType[] = [
  'transfer_initiated',
  'transfer_code_rejected',
  'transfer_locked',
  'transfer_expired',
  'transfer_cancelled',
  'sold',
  'transferred',
];

/** True for the events kept out of the public stream. */
export const isPrivateTransferEvent = (event: TransferEvent): boolean => event.type === 'transfer_code_rejected';

export interface TransferState extends TransferTerms {
  expiresAt: string;
  status: 'pending' | 'completed' | 'locked' | 'expired' | 'cancelled';
  /** Wrong codes so far (from the private row). */
  attempts: number;
}

/** What the transfer decisions read of an object. */
export interface TransferFacts {
  id: string;
  ownerId: string;
  transfers: ReadonlyMap<string, TransferState>;
  /** The transfer that holds the object, if any: at most one at a time. */
  openTransferId: string | undefined;
  /** How many events the object's stream holds (counted by the object's evolve). */
  eventCount: number;
}

/**
 * A transfer starts only while the object's history holds fewer events than this: the 1,000 that
 * other events may fill (object.ts, maxObjectEvents) and room for a few dozen sales beyond, so a full
 * history can still be sold, while starting and locking transfers over and over cannot grow it
 * without end (every request on the object reads its whole history).
 */
export const maxEventsToStartTransfer = 1_100;

/**
 * A confirm's code as the shell found it. The shell first takes one of the transfer's
 * `maxCodeAttempts` tries in one statement, so however many confirms arrive at once no more codes
 * than that are ever acted on (a comparison counts only with a try; without one it is `untried`):
 * - `matches`: the code is the transfer's;
 * - `wrong`: it is not; `attempts` is the wrong codes counted so far, this one included;
 * - `untried`: every try was taken (by wrong codes, or by confirms still running), nothing compared.
 */
export type CodeCheck = { result: 'matches' } | { result: 'wrong'; attempts: number } | { result: 'untried' };

export type TransferCommand =
  | ({ type: 'StartTransfer'; now: Date } & TransferTerms)
  /** `eventId`: the id the sale's `transferred` event takes (from the request's Idempotency-Key). */
  | { type: 'ConfirmTransfer'; transferId: string; code: CodeCheck; now: Date; eventId?: string }
  | { type: 'CancelTransfer'; transferId: string; now: Date };

/** A refusal, as a value; the shell answers it with the same code. */
export type DomainError = ContractsDomainError<'CONFLICT' | 'GONE' | 'NOT_FOUND' | 'VALIDATION_ERROR'>;

export const isDomainError = (decision: readonly TransferEvent[] | DomainError): decision is DomainError =>
  isRefusedDecision(decision);

/** The facts of a just-registered object. */
export const initialTransferFacts = (objectId: string, ownerId: string): TransferFacts => ({
  id: objectId,
  ownerId,
  transfers: new Map(),
  openTransferId: undefined,
  eventCount: 0,
});

const hasExpired = (transfer: TransferState, now: Date) => now.getTime() >= Date.parse(transfer.expiresAt);

/**
 * The end of a pending transfer that has ended without its event recorded (its expiry passed, or
 * its fifth wrong code counted but the lock cut off), if it has: the event to record.
 */
function unrecordedEnd(transfer: TransferState, now: Date): TransferEvent | undefined {
  const { transferId } = transfer;
  if (hasExpired(transfer, now)) return { type: 'transfer_expired', data: { transferId, expiresAt: transfer.expiresAt } };
  if (transfer.attempts >= maxCodeAttempts) return { type: 'transfer_locked', data: { transferId } };
  return undefined;
}

/** The status a pending transfer has once `end` (unrecordedEnd) is recorded; pending without one. */
const statusOfEnd = (end: TransferEvent | undefined): TransferState['status'] =>
  end === undefined ? 'pending' : end.type === 'transfer_expired' ? 'expired' : 'locked';

const sameTerms = (a: TransferTerms, b: TransferTerms) =>
  a.fromOwnerId === b.fromOwnerId &&
  a.toOwnerId === b.toOwnerId &&
  a.salePrice === b.salePrice &&
  a.saleCurrency === b.saleCurrency;

/**
 * Decides a transfer command on the object's folded state: the events to record, or a refusal.
 * An open transfer that has expired (or whose lock was not recorded) no longer holds the object:
 * starting a new one records its end first.
 */
export function decide(command: TransferCommand, state: TransferFacts): TransferEvent[] | DomainError {
  switch (command.type) {
    case 'StartTransfer': {
      if (command.fromOwnerId === command.toOwnerId) {
        return refuse('VALIDATION_ERROR', 'Invalid request: toOwnerId is the current owner.', {
          fields: [{ field: 'toOwnerId', in: 'body', message: 'must differ from fromOwnerId' }],
        });
      }
      if (!currencyCodes.has(command.saleCurrency)) {
        // Three capitals that are no currency (ZZZ) would stay in the object's history for good.
        return refuse('VALIDATION_ERROR', `Invalid request: saleCurrency ${command.saleCurrency} is not an ISO 4217 currency.`, {
          fields: [{ field: 'saleCurrency', in: 'body', message: 'must be an ISO 4217 currency code (EUR, USD, CHF, …)' }],
        });
      }
      if (state.ownerId !== command.fromOwnerId) {
        return refuse('CONFLICT', 'fromOwnerId is not the object’s current owner.', { field: 'fromOwnerId' });
      }
      if (state.eventCount >= maxEventsToStartTransfer) {
        return refuse(
          'CONFLICT',
          `The object's history holds ${state.eventCount} events, the most with which a transfer may start (${maxEventsToStartTransfer}).`,
          { limit: maxEventsToStartTransfer, eventCount: state.eventCount },
        );
      }
      const existing = state.transfers.get(command.transferId);
      if (existing) {
        const { transferId } = command;
        if (!sameTerms(existing, command)) return refuse('CONFLICT', `Transfer ${transferId} exists already.`, { transferId });
        // The same start again (a retry whose answer was lost): nothing new to record while it stands.
        // One that has ended, recorded or not (expired, or its fifth wrong code's lock cut off), stands
        // no more: answered again, its code would be refused by every confirm. Nothing is recorded
        // here; the seller's next start or cancel records an unrecorded end.
        const status = existing.status === 'pending' ? statusOfEnd(unrecordedEnd(existing, command.now)) : existing.status;
        if (status === 'pending') return [];
        return refuse('CONFLICT', `Transfer ${transferId} has ended (${status}); start a new one with another Idempotency-Key.`, {
          transferId,
          status,
        });
      }
      const open = state.openTransferId === undefined ? undefined : state.transfers.get(state.openTransferId);
      const openEnd = open && unrecordedEnd(open, command.now);
      if (open && !openEnd) return refuse('CONFLICT', 'The object already has a pending transfer.', { objectId: state.id });
      const ended: TransferEvent[] = openEnd ? [openEnd] : [];
      const { transferId, fromOwnerId, toOwnerId, salePrice, saleCurrency, now } = command;
      const expiresAt = new Date(now.getTime() + transferLifetimeMs).toISOString();
      return [
        ...ended,
        { type: 'transfer_initiated', data: { transferId, fromOwnerId, toOwnerId, salePrice, saleCurrency, expiresAt } },
      ];
    }
    case 'ConfirmTransfer': {
      const transfer = state.transfers.get(command.transferId);
      if (!transfer) {
        return refuse('NOT_FOUND', `Transfer ${command.transferId} was not found.`, { transferId: command.transferId });
      }
      switch (transfer.status) {
        case 'completed':
          return refuse('CONFLICT', 'The transfer is already completed.', { status: 'completed' });
        case 'locked':
          return lockedAfterWrongCodes();
        case 'expired':
          return refuse('GONE', 'The transfer code has expired; start a new transfer.', { expiresAt: transfer.expiresAt });
        case 'cancelled':
          return refuse('CONFLICT', 'The transfer was cancelled by the seller; start a new one.', { status: 'cancelled' });
        case 'pending':
          break;
        default:
          return transfer.status satisfies never;
      }
      const { transferId } = transfer;
      // Recorded, so the object is free for a new transfer; the shell answers 410.
      if (hasExpired(transfer, command.now))
        return [{ type: 'transfer_expired', data: { transferId, expiresAt: transfer.expiresAt } }];
      const { code } = command;
      if (code.result === 'wrong') {
        // Counted by the shell with the try it took: exactly one confirm counts the fifth, and locks.
        const rejected: TransferEvent = { type: 'transfer_code_rejected', data: { transferId, attempts: code.attempts } };
        return code.attempts >= maxCodeAttempts ? [rejected, { type: 'transfer_locked', data: { transferId } }] : [rejected];
      }
      if (code.result === 'untried') {
        // A confirm without a try records nothing, not even a lock the fifth wrong code's confirm
        // has still to append (or whose append was cut off: the seller's next start or cancel
        // records it, unrecordedEnd). In a burst of guesses each would race that append and decide
        // again: 95 version conflicts for 100 guesses, timing out on a slow machine.
        if (transfer.attempts >= maxCodeAttempts) return lockedAfterWrongCodes();
        // Fewer than five wrong codes, yet every try is taken: a right code holds one (a confirm
        // still running, which completes the transfer, or one cut off). This code was not compared.
        return refuse('CONFLICT', `The transfer has taken its ${maxCodeAttempts} tries; it takes no more codes.`, {
          status: 'locked',
        });
      }
      // Never a sale after five wrong codes, whatever the shell says of the code (its tries make this
      // unreachable: a right code holds a try only while fewer than five are wrong): the lock instead.
      if (transfer.attempts >= maxCodeAttempts) return [{ type: 'transfer_locked', data: { transferId } }];
      if (state.ownerId !== transfer.fromOwnerId) {
        return refuse('CONFLICT', 'The object changed hands since this transfer began.', { transferId });
      }
      const { fromOwnerId, toOwnerId, salePrice, saleCurrency } = transfer;
      return [
        { type: 'sold', data: { transferId, fromOwnerId, toOwnerId, salePrice, saleCurrency } },
        {
          type: 'transferred',
          data: { transferId, fromOwnerId, toOwnerId },
          ...(command.eventId !== undefined ? { eventId: command.eventId } : {}),
        },
      ];
    }
    case 'CancelTransfer': {
      const transfer = state.transfers.get(command.transferId);
      if (!transfer) {
        return refuse('NOT_FOUND', `Transfer ${command.transferId} was not found.`, { transferId: command.transferId });
      }
      // Cancelled already (a retry whose answer was lost): nothing more to record.
      if (transfer.status === 'cancelled') return [];
      if (transfer.status !== 'pending') {
        return refuse('CONFLICT', `The transfer has ended (${transfer.status}); there is nothing to cancel.`, {
          status: transfer.status,
        });
      }
      // Ended by its expiry or its fifth wrong code without the event recorded: record that, not a cancellation.
      const end = unrecordedEnd(transfer, command.now);
      return [end ?? { type: 'transfer_cancelled', data: { transferId: transfer.transferId } }];
    }
    default:
      return command satisfies never;
  }
}

/** The refusal of a code to a transfer that five wrong codes locked. */
export const lockedAfterWrongCodes = () =>
  refuse('CONFLICT', `The transfer is locked after ${maxCodeAttempts} wrong codes; start a new one.`, { status: 'locked' });

/** A transfer's row as a confirm that found no try left reads it: wrong codes counted, status, expiry. */
export interface TransferRowFacts {
  attempts: number;
  /** A copy of the stream's status (pending, completed, locked, expired, cancelled; legacy 'completing'). */
  status: string;
  expiresAt: Date;
}

/**
 * The refusal of a confirm that found no try left, from its transfer's row alone, when the row shows
 * what `decide` would answer on the object's history: five wrong codes counted (their lock recorded,
 * or still being appended) on a transfer pending or locked and not past its expiry, refused as
 * locked. Undefined when only the history can tell (an expiry to record, an end the row has not).
 * In a burst of guesses every confirm after the fifth wrong code is then two statements, not a load
 * of the history: all 288 of hostile-transfers' bursts, where a row reading `locked` caught 3 (the
 * lock is appended after they took no try). A row lags its stream after a cut-off (a sale recorded,
 * its row not) or, with KurrentDB, until an append's read models are written: five wrong codes after
 * such a sale are answered locked here, not completed, until a request that loads the history
 * repairs the row.
 */
export function lockedWithoutTry(row: TransferRowFacts, now: Date): DomainError | undefined {
  const locks = row.attempts >= maxCodeAttempts && (row.status === 'pending' || row.status === 'locked');
  return locks && now.getTime() < row.expiresAt.getTime() ? lockedAfterWrongCodes() : undefined;
}

function withTransfer<S extends TransferFacts>(state: S, transferId: string, change: Partial<TransferState>): S {
  const transfer = state.transfers.get(transferId);
  if (!transfer) return state;
  const transfers = new Map(state.transfers);
  const next = { ...transfer, ...change };
  transfers.set(transferId, next);
  const stillOpen = next.status === 'pending' && state.openTransferId === transferId;
  return {
    ...state,
    transfers,
    openTransferId: stillOpen ? transferId : state.openTransferId === transferId ? undefined : state.openTransferId,
  };
}

/** Applies one transfer event to the object's state (a new state; the old one is left as it was). */
export function evolve<S extends TransferFacts>(state: S, event: TransferEvent): S {
  switch (event.type) {
    case 'transfer_initiated': {
      const { transferId, fromOwnerId, toOwnerId, salePrice, saleCurrency, expiresAt } = event.data;
      const transfers = new Map(state.transfers);
      const transfer: TransferState = {
        transferId,
        fromOwnerId,
        toOwnerId,
        salePrice,
        saleCurrency,
        expiresAt,
        status: 'pending',
        attempts: 0,
      };
      transfers.set(transferId, transfer);
      return { ...state, transfers, openTransferId: transferId };
    }
    case 'transfer_code_rejected': {
      const attempts = Math.max(state.transfers.get(event.data.transferId)?.attempts ?? 0, event.data.attempts);
      return withTransfer(state, event.data.transferId, { attempts });
    }
    case 'transfer_locked':
      return withTransfer(state, event.data.transferId, { status: 'locked' });
    case 'transfer_expired':
      return withTransfer(state, event.data.transferId, { status: 'expired' });
    case 'transfer_cancelled':
      return withTransfer(state, event.data.transferId, { status: 'cancelled' });
    case 'sold':
      return withTransfer(state, event.data.transferId, { status: 'completed' });
    case 'transferred':
      return { ...withTransfer(state, event.data.transferId, { status: 'completed' }), ownerId: event.data.toOwnerId };
    default:
      return event satisfies never;
  }
}
