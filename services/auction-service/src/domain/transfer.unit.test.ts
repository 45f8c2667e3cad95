import { describe, expect, it } from 'vitest';
import {
  type CodeCheck,
  type DomainError,
  decide,
  evolve,
  initialTransferFacts,
  isDomainError,
  lockedWithoutTry,
  maxCodeAttempts,
  maxEventsToStartTransfer,
  type TransferCommand,
  type TransferEvent,
  type TransferTerms,
  transferLifetimeMs,
} from './transfer.ts';

const T0 = new Date('2025-03-01T10:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const expiry = (startedAt: Date) => new Date(startedAt.getTime() + transferLifetimeMs).toISOString();

const terms = (transferId = 'trf_1', fromOwnerId = 'jane', toOwnerId = 'buyer'): TransferTerms => ({
  transferId,
  fromOwnerId,
  toOwnerId,
  salePrice: 1000,
  saleCurrency: 'EUR',
});
const started = (transferId = 'trf_1', startedAt = T0, from = 'jane', to = 'buyer'): TransferEvent => ({
  type: 'transfer_initiated',
  data: { ...terms(transferId, from, to), expiresAt: expiry(startedAt) },
});
const rejected = (attempts: number, transferId = 'trf_1'): TransferEvent => ({
  type: 'transfer_code_rejected',
  data: { transferId, attempts },
});
const locked = (transferId = 'trf_1'): TransferEvent => ({ type: 'transfer_locked', data: { transferId } });
const expired = (transferId = 'trf_1', startedAt = T0): TransferEvent => ({
  type: 'transfer_expired',
  data: { transferId, expiresAt: expiry(startedAt) },
});
const completion = (transferId = 'trf_1', from = 'jane', to = 'buyer'): TransferEvent[] => [
  { type: 'sold', data: terms(transferId, from, to) },
  { type: 'transferred', data: { transferId, fromOwnerId: from, toOwnerId: to } },
];

const start = (
  now: Date,
  transferId = 'trf_2',
  from = 'jane',
  to = 'buyer',
): Extract<TransferCommand, { type: 'StartTransfer' }> => ({
  type: 'StartTransfer',
  now,
  ...terms(transferId, from, to),
});
const matches: CodeCheck = { result: 'matches' };
const wrong = (attempts: number): CodeCheck => ({ result: 'wrong', attempts });
const untried: CodeCheck = { result: 'untried' };
const confirm = (code: CodeCheck, now = at(60_000), transferId = 'trf_1'): TransferCommand => ({
  type: 'ConfirmTransfer',
  transferId,
  code,
  now,
});

/** given(events).when(command).then(events or a refusal): the decider alone, no HTTP, no database. */
function given(events: TransferEvent[]) {
  const state = events.reduce(evolve, initialTransferFacts('obj_1', 'jane'));
  return {
    state,
    when(command: TransferCommand) {
      const decision = decide(command, state);
      return {
        // biome-ignore lint/suspicious/noThenProperty: the given/when/then spec form; this object is never awaited
        then(expected: TransferEvent[]) {
          expect(decision).toEqual(expected);
        },
        thenRefused(code: DomainError['code'], details: Record<string, unknown> = {}) {
          expect(isDomainError(decision), JSON.stringify(decision)).toBe(true);
          expect(decision).toMatchObject({ code, details });
        },
      };
    },
  };
}

describe('starting a transfer', () => {
  it('records a transfer that lives 72 hours from the command’s time', () =>
    given([])
      .when(start(T0, 'trf_1'))
      .then([started('trf_1', T0)]));

  it('refuses a sale in three capitals that are no ISO 4217 currency, which would stay in the history for good', () => {
    // And withdrawn ones the runtime's ICU may still list (HRK since 2023, CUC, ZWL), and units (XDR).
    for (const saleCurrency of ['ZZZ', 'ABC', 'XTS', 'HRK', 'CUC', 'ZWL', 'XDR'])
      given([])
        .when({ ...start(T0, 'trf_1'), saleCurrency })
        .thenRefused('VALIDATION_ERROR', { fields: [expect.objectContaining({ field: 'saleCurrency' })] });
    for (const saleCurrency of ['EUR', 'USD', 'CHF', 'JPY', 'HKD', 'ZWG', 'XCG', 'SLE'])
      given([])
        .when({ ...start(T0, 'trf_1'), saleCurrency })
        .then([{ ...started('trf_1', T0), data: { ...started('trf_1', T0).data, saleCurrency } } as TransferEvent]);
  });

  it('refuses a transfer from someone who is not the owner', () =>
    given([])
      .when(start(T0, 'trf_1', 'someone-else'))
      .thenRefused('CONFLICT', { field: 'fromOwnerId' }));

  it('refuses a transfer once the history holds maxEventsToStartTransfer events, not before', () => {
    const facts = (eventCount: number) => ({ ...initialTransferFacts('obj_1', 'jane'), eventCount });
    expect(decide(start(T0, 'trf_1'), facts(maxEventsToStartTransfer))).toMatchObject({
      code: 'CONFLICT',
      details: { limit: maxEventsToStartTransfer, eventCount: maxEventsToStartTransfer },
    });
    expect(decide(start(T0, 'trf_1'), facts(maxEventsToStartTransfer - 1))).toEqual([started('trf_1', T0)]);
  });

  it('refuses a transfer to the owner', () =>
    given([])
      .when(start(T0, 'trf_1', 'jane', 'jane'))
      .thenRefused('VALIDATION_ERROR'));

  it('refuses a second transfer while one is open', () =>
    given([started()])
      .when(start(at(transferLifetimeMs - 1)))
      .thenRefused('CONFLICT', { objectId: 'obj_1' }));

  it('an expired transfer frees the object for a new one (bug 2)', () =>
    given([started()])
      .when(start(at(transferLifetimeMs)))
      .then([expired(), started('trf_2', at(transferLifetimeMs))]));

  it('a transfer recorded as expired holds nothing', () =>
    given([started(), expired()])
      .when(start(at(1)))
      .then([started('trf_2', at(1))]));

  it('a locked transfer frees the object', () =>
    given([started(), ...Array.from({ length: maxCodeAttempts }, (_, i) => rejected(i + 1)), locked()])
      .when(start(at(1)))
      .then([started('trf_2', at(1))]));

  it('a fifth wrong code whose lock was cut off is locked before the new transfer starts', () =>
    given([started(), rejected(maxCodeAttempts)])
      .when(start(at(1)))
      .then([locked(), started('trf_2', at(1))]));

  it('the same start again (a retry whose answer was lost) records nothing, so the shell answers the same transfer', () =>
    given([started('trf_1', T0)])
      .when(start(at(60_000), 'trf_1'))
      .then([]));

  it('the same transfer id with other terms is a conflict', () => {
    given([started('trf_1', T0)])
      .when({ ...start(at(60_000), 'trf_1'), salePrice: 999 })
      .thenRefused('CONFLICT', { transferId: 'trf_1' });
    given([started('trf_1', T0)])
      .when(start(at(60_000), 'trf_1', 'jane', 'someone-else'))
      .thenRefused('CONFLICT', { transferId: 'trf_1' });
  });

  it('a repeated start of a transfer that has ended is a conflict naming its end, not a new transfer', () => {
    given([started('trf_1', T0), expired('trf_1', T0)])
      .when(start(at(1), 'trf_1'))
      .thenRefused('CONFLICT', { transferId: 'trf_1', status: 'expired' });
    given([started('trf_1', T0), { type: 'transfer_cancelled', data: { transferId: 'trf_1' } }])
      .when(start(at(1), 'trf_1'))
      .thenRefused('CONFLICT', { transferId: 'trf_1', status: 'cancelled' });
    // Completed, the seller no longer owns the object, which is the refusal's reason.
    given([started('trf_1', T0), ...completion('trf_1')])
      .when(start(at(1), 'trf_1'))
      .thenRefused('CONFLICT', { field: 'fromOwnerId' });
    // Ended without the event recorded: past its expiry, or its fifth wrong code counted with the
    // lock cut off (its code takes no more tries). Refused, recording nothing.
    given([started('trf_1', T0)])
      .when(start(at(transferLifetimeMs), 'trf_1'))
      .thenRefused('CONFLICT', { transferId: 'trf_1', status: 'expired' });
    given([started('trf_1', T0), rejected(maxCodeAttempts, 'trf_1')])
      .when(start(at(1), 'trf_1'))
      .thenRefused('CONFLICT', { transferId: 'trf_1', status: 'locked' });
    // One wrong code fewer, it stands: the retry is answered the same transfer.
    given([started('trf_1', T0), rejected(maxCodeAttempts - 1, 'trf_1')])
      .when(start(at(1), 'trf_1'))
      .then([]);
  });

  it('after a completed sale only the new owner can start one', () => {
    given([started(), ...completion()])
      .when(start(at(1)))
      .thenRefused('CONFLICT', { field: 'fromOwnerId' });
    given([started(), ...completion()])
      .when(start(at(1), 'trf_2', 'buyer', 'next'))
      .then([started('trf_2', at(1), 'buyer', 'next')]);
  });
});

describe('confirming a transfer', () => {
  it('the right code completes the sale', () => given([started()]).when(confirm(matches)).then(completion()));

  it('a keyed confirm’s sale is recorded under the id its key gives, so its retry finds it', () => {
    const [sold, transferred] = completion() as [TransferEvent, TransferEvent];
    const keyed: TransferCommand = {
      type: 'ConfirmTransfer',
      transferId: 'trf_1',
      code: matches,
      now: at(60_000),
      eventId: 'ev-confirm',
    };
    given([started()])
      .when(keyed)
      .then([sold, { ...transferred, eventId: 'ev-confirm' } as TransferEvent]);
    // Completed, it is refused: the shell, not the decider, answers a retry with its sale.
    given([started(), ...completion()])
      .when(keyed)
      .thenRefused('CONFLICT', { status: 'completed' });
  });

  it('a wrong code is recorded as an attempt, not thrown', () =>
    given([started()])
      .when(confirm(wrong(1)))
      .then([rejected(1)]));

  it('the fifth wrong code locks the transfer', () => {
    given([started(), rejected(4)])
      .when(confirm(wrong(5)))
      .then([rejected(5), locked()]);
    // The shell counted it before the state was loaded: the state may hold it already.
    given([started(), rejected(5)])
      .when(confirm(wrong(5)))
      .then([rejected(5), locked()]);
  });

  it('a wrong code is counted as the shell counted it, whatever others counted since', () =>
    given([started(), rejected(4)])
      .when(confirm(wrong(2)))
      .then([rejected(2)]));

  it('a right code that holds a try completes the sale while wrong codes racing it were counted (burst)', () =>
    given([started(), rejected(4)])
      .when(confirm(matches))
      .then(completion()));

  it('a confirm that found no try left is refused as locked, whatever its code (burst)', () =>
    given([started(), rejected(3)])
      .when(confirm(untried))
      .thenRefused('CONFLICT', { status: 'locked' }));

  it('a locked transfer refuses even the right code', () => {
    given([started(), rejected(5), locked()])
      .when(confirm(matches))
      .thenRefused('CONFLICT', { status: 'locked' });
    given([started(), rejected(5), locked()])
      .when(confirm(untried))
      .thenRefused('CONFLICT', { status: 'locked' });
  });

  it('a fifth wrong code whose lock was cut off is refused as locked by a confirm without a try, which records nothing', () =>
    // Recording it there would race the fifth wrong code's own append in every burst of guesses;
    // the next start or cancel records it (below, and 'a transfer past its expiry, or whose fifth…').
    given([started(), rejected(5)])
      .when(confirm(untried))
      .thenRefused('CONFLICT', { status: 'locked' }));

  it('never sells after five wrong codes, even to a right code said to hold a try (the shell gives none then): it records the lock', () =>
    given([started(), rejected(5)])
      .when(confirm(matches))
      .then([locked()]));

  it('a code past its expiry records the expiry (the shell answers 410)', () => {
    given([started()])
      .when(confirm(matches, at(transferLifetimeMs)))
      .then([expired()]);
    given([started()])
      .when(confirm(untried, at(transferLifetimeMs)))
      .then([expired()]);
  });

  it('an expired transfer is gone', () =>
    given([started(), expired()])
      .when(confirm(matches))
      .thenRefused('GONE', { expiresAt: expiry(T0) }));

  it('a completed transfer is a conflict', () => {
    given([started(), ...completion()])
      .when(confirm(matches))
      .thenRefused('CONFLICT', { status: 'completed' });
    given([started(), ...completion()])
      .when(confirm(wrong(1)))
      .thenRefused('CONFLICT', { status: 'completed' });
  });

  it('an unknown transfer is not found', () =>
    given([started()])
      .when(confirm(matches, at(1), 'trf_9'))
      .thenRefused('NOT_FOUND', { transferId: 'trf_9' }));

  it('a confirm whose completion was cut off before it was recorded can be confirmed again (bug 1)', () =>
    // Nothing of the cut-off confirm reached the stream (the old "completing" claim was a row,
    // not an event): the transfer is still pending and the right code completes it.
    given([started()]).when(confirm(matches)).then(completion()));

  it('a completion that was recorded is completed on load: the object has its new owner and is free', () => {
    const { state } = given([started(), ...completion()]);
    expect(state.ownerId).toBe('buyer');
    expect(state.openTransferId).toBeUndefined();
    expect(state.transfers.get('trf_1')?.status).toBe('completed');
  });
});

describe('a confirm that found no try left, refused from its row (lockedWithoutTry)', () => {
  // Each row as a confirm reads it, with the history it copies: the row's refusal, when it gives
  // one, must be the decider's on that history, at every moment.
  const cancelled: TransferEvent = { type: 'transfer_cancelled', data: { transferId: 'trf_1' } };
  const cases: Array<{ status: string; attempts: number; history: TransferEvent[] }> = [
    ...[maxCodeAttempts - 1, maxCodeAttempts].flatMap((attempts) => [
      { status: 'pending', attempts, history: [started(), rejected(attempts)] },
      // A row of the release before transfers moved into the stream.
      { status: 'completing', attempts, history: [started(), rejected(attempts)] },
      { status: 'cancelled', attempts, history: [started(), rejected(attempts), cancelled] },
      { status: 'expired', attempts, history: [started(), rejected(attempts), expired()] },
    ]),
    { status: 'locked', attempts: maxCodeAttempts, history: [started(), rejected(maxCodeAttempts), locked()] },
    { status: 'completed', attempts: maxCodeAttempts - 1, history: [started(), rejected(maxCodeAttempts - 1), ...completion()] },
  ];
  const moments = [at(60_000), at(transferLifetimeMs - 1), at(transferLifetimeMs), at(transferLifetimeMs + 60_000)];

  it('refuses only as the decider would on the history the row copies', () => {
    let refusedFromRow = 0;
    for (const { status, attempts, history } of cases) {
      for (const now of moments) {
        const refusal = lockedWithoutTry({ attempts, status, expiresAt: new Date(expiry(T0)) }, now);
        if (!refusal) continue;
        refusedFromRow += 1;
        expect(
          decide(confirm(untried, now), given(history).state),
          `${status}, ${attempts} wrong, at ${now.toISOString()}`,
        ).toEqual(refusal);
      }
    }
    // Pending and locked rows with five wrong codes, before the expiry.
    expect(refusedFromRow).toBe(4);
  });

  it('leaves to the decider a transfer past its expiry (its end to record), or with fewer than five wrong codes', () => {
    const row = { attempts: maxCodeAttempts, status: 'pending', expiresAt: new Date(expiry(T0)) };
    expect(lockedWithoutTry(row, at(transferLifetimeMs - 1))).toMatchObject({ code: 'CONFLICT', details: { status: 'locked' } });
    expect(lockedWithoutTry(row, at(transferLifetimeMs))).toBeUndefined();
    expect(lockedWithoutTry({ ...row, attempts: maxCodeAttempts - 1 }, at(1))).toBeUndefined();
    given([started()])
      .when(confirm(untried, at(transferLifetimeMs)))
      .then([expired()]);
  });
});

describe('cancelling a transfer', () => {
  const cancel = (now = at(60_000), transferId = 'trf_1'): TransferCommand => ({ type: 'CancelTransfer', transferId, now });
  const cancelled = (transferId = 'trf_1'): TransferEvent => ({ type: 'transfer_cancelled', data: { transferId } });

  it('records the cancellation of a pending transfer, which frees the object', () => {
    given([started()]).when(cancel()).then([cancelled()]);
    const { state } = given([started(), cancelled()]);
    expect(state.openTransferId).toBeUndefined();
    expect(state.transfers.get('trf_1')?.status).toBe('cancelled');
    expect(state.ownerId).toBe('jane');
  });

  it('a cancelled transfer’s code completes nothing, right or not', () => {
    given([started(), cancelled()]).when(confirm(matches)).thenRefused('CONFLICT', { status: 'cancelled' });
    given([started(), cancelled()])
      .when(confirm(wrong(1)))
      .thenRefused('CONFLICT', { status: 'cancelled' });
  });

  it('a new transfer starts at once after a cancellation', () =>
    given([started(), cancelled()])
      .when(start(at(120_000)))
      .then([started('trf_2', at(120_000))]));

  it('cancelling again records nothing (a retry whose answer was lost)', () =>
    given([started(), cancelled()])
      .when(cancel(at(120_000)))
      .then([]));

  it('an ended transfer has nothing to cancel', () => {
    given([started(), ...completion()])
      .when(cancel())
      .thenRefused('CONFLICT', { status: 'completed' });
    given([started(), rejected(5), locked()])
      .when(cancel())
      .thenRefused('CONFLICT', { status: 'locked' });
    given([started(), expired()]).when(cancel()).thenRefused('CONFLICT', { status: 'expired' });
  });

  it('a transfer past its expiry, or whose fifth wrong code’s lock was cut off, records that instead', () => {
    given([started()])
      .when(cancel(at(transferLifetimeMs)))
      .then([expired()]);
    given([started(), rejected(5)])
      .when(cancel())
      .then([locked()]);
  });

  it('an unknown transfer is not found', () =>
    given([started()])
      .when(cancel(at(1), 'trf_9'))
      .thenRefused('NOT_FOUND', { transferId: 'trf_9' }));
});

describe('evolve', () => {
  it('leaves the state it was given as it was', () => {
    const before = given([started()]).state;
    evolve(before, rejected(3));
    expect(before.transfers.get('trf_1')?.attempts).toBe(0);
  });

  it('never lowers the attempt count (a replayed private row)', () => {
    const { state } = given([started(), rejected(3), rejected(2)]);
    expect(state.transfers.get('trf_1')?.attempts).toBe(3);
  });
});
