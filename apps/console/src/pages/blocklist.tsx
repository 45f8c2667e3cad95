import { useState } from 'preact/hooks';
import { type ApiError, api, asApiError, withQuery } from '../api.ts';
import { Badge } from '../components/badge.tsx';
import { BlockKindField } from '../components/block-kind.tsx';
import { Dialog, DialogActions } from '../components/dialog.tsx';
import { describedBy, Field } from '../components/field.tsx';
import { FilterTabs } from '../components/filter-tabs.tsx';
import { Notice, useNoticeOf } from '../components/notice.tsx';
import { Pager, useCursorPages } from '../components/pager.tsx';
import { Quoted } from '../components/quoted.tsx';
import { FormError, HiddenByScope, LoadedView } from '../components/states.tsx';
import { TableScroll } from '../components/table-scroll.tsx';
import { formatTime } from '../format.ts';
import { asGtin14 } from '../gtin.ts';
import { Link, type Location } from '../router.tsx';
import { holds, restrictedGtin } from '../scopes.ts';
import type { BlockKind, BlockView, Pagination, SessionView } from '../types.ts';
import { useLoad } from '../use-load.ts';

// The account's blocklist (GET /blocklist): codes, or serial ranges of a GTIN, that verifications
// answer as counterfeit or suspicious (withdrawn) whatever their signature says. A person blocks a
// code or a range (POST /blocklist: a batch withdrawn, a run of labels found on fakes) and unblocks
// an entry (DELETE /blocklist/{blockId}), which stays in the record as removed.

type BlockStatus = 'active' | 'removed';

const statuses: ReadonlyArray<{ value: BlockStatus | ''; label: string }> = [
  { value: 'active', label: 'Blocking now' },
  { value: 'removed', label: 'Removed' },
  { value: '', label: 'All' },
];

const statusOf = (query: URLSearchParams): BlockStatus | '' => {
  const value = query.get('status') ?? 'active';
  return statuses.some((status) => status.value === value) ? (value as BlockStatus | '') : 'active';
};

/** The codes an entry covers, as a person reads them: one serial, or the first and last of a range. */
export const codesOf = (block: Pick<BlockView, 'gtin' | 'serialFrom' | 'serialTo'>): string =>
  block.serialFrom === block.serialTo
    ? `${block.gtin} / ${block.serialFrom}`
    : `${block.gtin} / ${block.serialFrom} to ${block.serialTo}`;

const kindWords: Readonly<Record<BlockKind, string>> = { counterfeit: 'Counterfeit', withdrawn: 'Suspicious (withdrawn)' };

export function BlocklistPage({ session, location }: { session: SessionView; location: Location }) {
  const status = statusOf(location.query);
  // One API key's blocks (`?createdBy=`, from the keys page): after a key leaks, what it blocked.
  const createdBy = location.query.get('createdBy') ?? undefined;
  // Another status is another list: its first page, with the form and the focus where they are.
  const pages = useCursorPages(`${status}|${createdBy ?? ''}`, 'blocklist');
  const blocks = useLoad(
    () =>
      // A key restricted to some GTINs lists the blocks of one (its first; the API lists them one GTIN at a time).
      api.get<{ blocks: BlockView[]; pagination: Pagination }>('/blocklist', {
        status,
        limit: 20,
        cursor: pages.cursor,
        gtin: restrictedGtin(session),
        createdBy,
      }),
    [status, createdBy, pages.cursor],
  );
  const [removing, setRemoving] = useState<BlockView | undefined>();
  const [removingAll, setRemovingAll] = useState(false);
  // What a change did is said on the list it was made on (the status shown then), not on another.
  const [notice, setNotice] = useNoticeOf(status);
  const mayBlock = holds(session, 'assets:create');
  const changed = (said: string) => {
    setNotice(said);
    pages.reset();
    blocks.reload();
  };

  return (
    <>
      <h1>Blocklist</h1>
      <p>
        Codes that verifications answer as counterfeit or suspicious whatever their signature says: a label found on fakes, a
        batch withdrawn. A code blocked because a report of it was confirmed is under{' '}
        <Link to="/reports?status=confirmed">Reports</Link>.
      </p>
      {mayBlock ? (
        <BlockForm
          onSending={() => setNotice(undefined)}
          onBlocked={(block) =>
            changed(`Blocked ${codesOf(block)}.${status === 'active' ? '' : ' It is listed under “Blocking now”.'}`)
          }
        />
      ) : (
        <HiddenByScope what="Blocking and unblocking" scope="assets:create" />
      )}
      <FilterTabs label="Blocklist entries by status" tabs={statuses} current={status} path="/blocklist" />
      {createdBy && (
        <p class="key-filter">
          Blocks made by the API key <span class="code">{createdBy}</span> · <Link to="/blocklist">every key’s blocks</Link>
          {holds(session, '*') && (
            <>
              {' '}
              <button
                type="button"
                class="button danger small"
                onClick={() => {
                  setNotice(undefined);
                  setRemovingAll(true);
                }}
              >
                Remove all blocks this key made
              </button>
            </>
          )}
        </p>
      )}
      <Notice text={notice} />
      <section aria-labelledby="blocks-heading" class="panel">
        <h2 id="blocks-heading">{statuses.find((each) => each.value === status)?.label ?? 'All'}</h2>
        <LoadedView
          loaded={blocks}
          what="blocklist entries"
          isEmpty={(data) => data.blocks.length === 0}
          empty={status === 'active' ? 'No code is blocked.' : 'No entries here.'}
        >
          {(data) => (
            <>
              <TableScroll labelledBy="blocks-heading">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Codes</th>
                      <th scope="col">Verifications answer</th>
                      <th scope="col">Reason</th>
                      <th scope="col">Blocked</th>
                      {mayBlock && <th scope="col">Actions</th>}
                    </tr>
                  </thead>
                  <tbody>
                    {data.blocks.map((block) => (
                      <tr key={block.blockId} data-block={block.blockId}>
                        <th scope="row" class="code">
                          {codesOf(block)}
                        </th>
                        <td>
                          <Badge tone={block.kind === 'counterfeit' ? 'bad' : 'warning'}>{kindWords[block.kind]}</Badge>
                        </td>
                        <td>{block.reason ? <Quoted text={block.reason} /> : '—'}</td>
                        <td>
                          {formatTime(block.createdAt)}
                          {block.removedAt && (
                            <>
                              <br />
                              <span class="muted">Removed {formatTime(block.removedAt)}</span>
                            </>
                          )}
                        </td>
                        {mayBlock && (
                          <td class="row-actions">
                            {block.status === 'active' && (
                              <button
                                type="button"
                                class="button secondary"
                                aria-label={`Unblock ${codesOf(block)}`}
                                onClick={() => {
                                  setNotice(undefined);
                                  setRemoving(block);
                                }}
                              >
                                Unblock
                              </button>
                            )}
                          </td>
                        )}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
              <Pager label="Blocklist entries" pages={pages} nextCursor={data.pagination.nextCursor} />
            </>
          )}
        </LoadedView>
      </section>
      {removingAll && createdBy && (
        <RemoveKeysBlocksDialog
          keyId={createdBy}
          onClose={() => setRemovingAll(false)}
          onRemoved={(removed) => {
            setRemovingAll(false);
            changed(removed === 1 ? 'Removed 1 block this key made.' : `Removed ${removed} blocks this key made.`);
          }}
        />
      )}
      {removing && (
        <UnblockDialog
          block={removing}
          onClose={() => setRemoving(undefined)}
          onRemoved={(removed) => {
            setRemoving(undefined);
            changed(`Unblocked ${codesOf(removed)}.`);
          }}
        />
      )}
    </>
  );
}

/** Blocks one code, or a serial range of a GTIN (the same length, both ends included). */
function BlockForm({ onSending, onBlocked }: { onSending: () => void; onBlocked: (block: BlockView) => void }) {
  const [gtin, setGtin] = useState('');
  const [range, setRange] = useState(false);
  const [serial, setSerial] = useState('');
  const [serialTo, setSerialTo] = useState('');
  const [kind, setKind] = useState<BlockKind>('counterfeit');
  const [reason, setReason] = useState('');
  const [errors, setErrors] = useState<{ gtin?: string; serial?: string; serialTo?: string; form?: ApiError }>({});
  const [busy, setBusy] = useState(false);
  /** The codes the form would block, while the person confirms it. */
  const [confirming, setConfirming] = useState<string | undefined>();

  const submit = (event: Event) => {
    event.preventDefault();
    const found: typeof errors = {};
    if (!/^\d{8,14}$/.test(gtin.trim())) found.gtin = 'Enter the GTIN (8 to 14 digits).';
    if (!serial.trim()) found.serial = range ? 'Enter the first serial of the range.' : 'Enter the serial.';
    if (range && !serialTo.trim()) found.serialTo = 'Enter the last serial of the range.';
    else if (range && serialTo.trim().length !== serial.trim().length)
      found.serialTo = 'The last serial has as many characters as the first (a range is of serials of one length).';
    setErrors(found);
    if (found.gtin || found.serial || found.serialTo) return;
    setConfirming(
      codesOf({ gtin: asGtin14(gtin.trim()), serialFrom: serial.trim(), serialTo: range ? serialTo.trim() : serial.trim() }),
    );
  };

  const block = async () => {
    onSending();
    setBusy(true);
    try {
      const created = await api.create<BlockView>('/blocklist', {
        gtin: asGtin14(gtin.trim()),
        ...(range ? { serialFrom: serial.trim(), serialTo: serialTo.trim() } : { serial: serial.trim() }),
        kind,
        ...(reason.trim() ? { reason: reason.trim() } : {}),
      });
      setSerial('');
      setSerialTo('');
      setReason('');
      setConfirming(undefined);
      onBlocked(created);
    } catch (caught) {
      setConfirming(undefined);
      const failure = asApiError(caught);
      const field = String(failure.details.field ?? '');
      if (field === 'gtin' || failure.code === 'INVALID_GTIN' || failure.code === 'GTIN_NOT_OWNED')
        setErrors({ gtin: failure.message });
      else if (field === 'serialTo') setErrors({ serialTo: failure.message });
      else if (field === 'serial' || field === 'serialFrom') setErrors({ serial: failure.message });
      else setErrors({ form: failure });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="block-form-heading" class="panel">
      <h2 id="block-form-heading">Block codes</h2>
      <form class="form" onSubmit={submit} noValidate>
        <Field
          id="block-gtin"
          label="GTIN"
          hint="8 to 14 digits (a shorter GTIN is sent as its GTIN-14), a GTIN your account signs for."
          error={errors.gtin}
        >
          <input
            {...describedBy('block-gtin', true, errors.gtin)}
            inputMode="numeric"
            value={gtin}
            onInput={(event) => setGtin(event.currentTarget.value)}
          />
        </Field>
        <fieldset class="field">
          <legend>Which codes</legend>
          <label class="block-label">
            <input type="radio" name="block-which" checked={!range} onChange={() => setRange(false)} />
            One serial
          </label>
          <label class="block-label">
            <input type="radio" name="block-which" checked={range} onChange={() => setRange(true)} />A range of serials (the same
            length, both ends included)
          </label>
        </fieldset>
        <Field id="block-serial" label={range ? 'First serial' : 'Serial'} error={errors.serial}>
          <input
            {...describedBy('block-serial', false, errors.serial)}
            maxLength={20}
            value={serial}
            onInput={(event) => setSerial(event.currentTarget.value)}
          />
        </Field>
        {range && (
          <Field id="block-serial-to" label="Last serial" error={errors.serialTo}>
            <input
              {...describedBy('block-serial-to', false, errors.serialTo)}
              maxLength={20}
              value={serialTo}
              onInput={(event) => setSerialTo(event.currentTarget.value)}
            />
          </Field>
        )}
        <BlockKindField name="blocklist-kind" kind={kind} onChange={setKind} />
        <Field
          id="blocklist-reason"
          label="Reason (optional)"
          hint="Shown on your account’s own verifications only: other accounts and the public page see that the code is blocked, not why."
        >
          <input
            {...describedBy('blocklist-reason', true, undefined)}
            maxLength={1000}
            value={reason}
            onInput={(event) => setReason(event.currentTarget.value)}
          />
        </Field>
        <FormError error={errors.form} />
        <button type="submit" class="button danger" disabled={busy}>
          {busy ? 'Blocking…' : range ? 'Block the range' : 'Block the code'}
        </button>
      </form>
      {confirming && (
        <Dialog title={range ? 'Block this range of codes?' : 'Block this code?'} onClose={() => setConfirming(undefined)}>
          <p>
            <span class="code">{confirming}</span> · {kindWords[kind]}
            {range && ' · every serial of this length from the first to the last'}
          </p>
          <p>
            From now on every verification of {range ? 'these codes' : 'this code'}, on every server and on the public page,
            answers {kind === 'counterfeit' ? 'COUNTERFEIT' : 'SUSPICIOUS'}, until the entry is removed.
          </p>
          <DialogActions
            error={undefined}
            onCancel={() => setConfirming(undefined)}
            onConfirm={block}
            busy={busy}
            label={range ? 'Block the range' : 'Block the code'}
            busyLabel="Blocking…"
            danger
          />
        </Dialog>
      )}
    </section>
  );
}

/** Unblocks one entry, after saying what that does; the API's refusal (say, removed meanwhile) shown in place. */
function UnblockDialog({
  block,
  onClose,
  onRemoved,
}: {
  block: BlockView;
  onClose: () => void;
  onRemoved: (removed: BlockView) => void;
}) {
  const [error, setError] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);
  const unblock = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onRemoved(await api.delete<BlockView>(`/blocklist/${encodeURIComponent(block.blockId)}`));
    } catch (caught) {
      setError(asApiError(caught));
      setBusy(false);
    }
  };
  return (
    <Dialog title="Unblock these codes?" onClose={onClose}>
      <form class="form" onSubmit={unblock} noValidate>
        <p>
          <span class="code">{codesOf(block)}</span> · {kindWords[block.kind]}
          {block.reason && (
            <>
              {' '}
              · <Quoted text={block.reason} />
            </>
          )}
        </p>
        <p>
          Verifications stop answering with this block at once, on every server, unless another entry or a confirmed report still
          blocks a code. The entry stays in the record as removed, and the code’s history keeps both.
        </p>
        <DialogActions error={error} onCancel={onClose} busy={busy} label="Unblock" busyLabel="Unblocking…" />
      </form>
    </Dialog>
  );
}

/** Removes every active block one API key made (DELETE /blocklist?createdBy=, scope *), after asking. */
function RemoveKeysBlocksDialog({
  keyId,
  onClose,
  onRemoved,
}: {
  keyId: string;
  onClose: () => void;
  onRemoved: (removed: number) => void;
}) {
  const [error, setError] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);
  const remove = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      // A request stops after its time with `more` when blocks may be left: asked again until none is.
      let removed = 0;
      for (;;) {
        const answer = await api.delete<{ removed: number; more: boolean }>(withQuery('/blocklist', { createdBy: keyId }));
        removed += answer.removed;
        if (!answer.more) break;
      }
      onRemoved(removed);
    } catch (caught) {
      setError(asApiError(caught));
      setBusy(false);
    }
  };
  return (
    <Dialog title="Remove every block this key made?" onClose={onClose}>
      <form class="form" onSubmit={remove} noValidate>
        <p>
          Every entry the API key <span class="code">{keyId}</span> made that still blocks codes is removed: verifications stop
          answering with them at once, on every server. For a key that leaked, revoke it first. The entries stay in the record as
          removed.
        </p>
        <DialogActions error={error} onCancel={onClose} busy={busy} label="Remove them all" busyLabel="Removing…" />
      </form>
    </Dialog>
  );
}
