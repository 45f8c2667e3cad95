import { useState } from 'preact/hooks';
import { type ApiError, api, apiUrl, asApiError } from '../api.ts';
import { Badge } from '../components/badge.tsx';
import { BlockKindField } from '../components/block-kind.tsx';
import { CopyButton } from '../components/copy-button.tsx';
import { Dialog, DialogActions } from '../components/dialog.tsx';
import { describedBy, Field } from '../components/field.tsx';
import { Pager, useCursorPages } from '../components/pager.tsx';
import { Quoted } from '../components/quoted.tsx';
import { HiddenByScope, LoadedView } from '../components/states.tsx';
import { TableScroll } from '../components/table-scroll.tsx';
import { flagInWords, formatCount, formatTime, scannedByWords, scanReasons, verdictWords } from '../format.ts';
import { Link } from '../router.tsx';
import { holds } from '../scopes.ts';
import type { BlockKind, CodeDetail, ScanView, SessionView } from '../types.ts';
import { useLoad } from '../use-load.ts';
import { DecideDialog } from './reports.tsx';

/** Print size of the PNG download: 25 mm wide at 300 dpi (about 295 pixels), recorded in the file. */
const printMm = 25;
const printDpi = 300;

export function CodePage({ assetId, session }: { assetId: string; session: SessionView }) {
  const code = useLoad(() => api.get<CodeDetail>(`/codes/${encodeURIComponent(assetId)}`), [assetId]);
  return (
    <>
      <p class="breadcrumb">
        <Link to="/codes">Codes</Link> › this code
      </p>
      <h1>
        {code.state === 'ready' ? (
          <>
            Code <span class="code">{code.data.gtin}</span> / <span class="code">{code.data.serialNumber}</span>
          </>
        ) : (
          'Code'
        )}
      </h1>
      <LoadedView loaded={code} what="the code">
        {(data) => <CodeDetails code={data} session={session} onChanged={code.reload} />}
      </LoadedView>
    </>
  );
}

function CodeDetails({ code, session, onChanged }: { code: CodeDetail; session: SessionView; onChanged: () => void }) {
  const metadata = Object.entries(code.metadata ?? {});
  const qr = (format: 'svg' | 'png') =>
    apiUrl('/code/qr', format === 'svg' ? { url: code.url, format } : { url: code.url, format, mm: printMm, dpi: printDpi });
  const fileName = `${code.gtin}-${code.serialNumber}`.replace(/[^A-Za-z0-9._-]/g, '_');
  return (
    <>
      <div class="code-grid">
        <section aria-labelledby="link-heading" class="panel">
          <h2 id="link-heading">Link and QR code</h2>
          <p class="break">
            <a href={code.url} class="code">
              {code.url}
            </a>
          </p>
          <CopyButton text={code.url} label="Copy link" />
          <img class="qr" src={qr('svg')} alt={`QR code of ${code.url}`} width={200} height={200} />
          <p class="actions-row">
            <a class="button secondary" href={qr('svg')} download={`${fileName}.svg`}>
              Download SVG
            </a>
            <a class="button secondary" href={qr('png')} download={`${fileName}.png`}>
              Download PNG ({printMm} mm at {printDpi} dpi)
            </a>
          </p>
        </section>
        <section aria-labelledby="facts-heading" class="panel">
          <h2 id="facts-heading">Details</h2>
          <dl class="facts">
            <dt>GTIN</dt>
            <dd class="code">{code.gtin}</dd>
            <dt>Serial</dt>
            <dd class="code">{code.serialNumber}</dd>
            <dt>Batch</dt>
            <dd>{code.batchNumber ?? '—'}</dd>
            <dt>Expiry</dt>
            <dd>{code.expiryDate ?? '—'}</dd>
            <dt>Created</dt>
            <dd>{formatTime(code.createdAt)}</dd>
            <dt>Scans</dt>
            <dd>
              {formatCount(code.scans.count)}
              {code.scans.firstAt && ` (first ${formatTime(code.scans.firstAt)}, last ${formatTime(code.scans.lastAt)})`}
            </dd>
            <dt>Risk flags</dt>
            <dd>{code.scans.flags.length > 0 ? code.scans.flags.map(flagInWords).join('; ') : 'None'}</dd>
            <dt>Reported</dt>
            <dd>{code.reported ? <ReportBadge status={code.reportStatus ?? 'pending'} /> : 'No'}</dd>
            <dt>Blocked</dt>
            <dd>
              {code.blocked && code.blocked.status === 'active' ? (
                <Badge tone="bad">
                  Blocked
                  {code.blocked.reason ? (
                    <>
                      : <bdi>{code.blocked.reason}</bdi>
                    </>
                  ) : (
                    ''
                  )}
                </Badge>
              ) : (
                'No'
              )}
            </dd>
          </dl>
          <h3>Metadata</h3>
          {metadata.length === 0 ? (
            <p class="state state-empty">No metadata.</p>
          ) : (
            <dl class="facts">
              {metadata.map(([name, value]) => (
                <div key={name} class="fact">
                  <dt>{name}</dt>
                  <dd>{typeof value === 'string' ? value : JSON.stringify(value)}</dd>
                </div>
              ))}
            </dl>
          )}
        </section>
      </div>
      {holds(session, 'assets:create') ? (
        code.blocked?.status === 'active' && code.blocked.kind === 'report' ? (
          <ReportBlock code={code} reportId={code.blocked.blockId} reason={code.blocked.reason} onChanged={onChanged} />
        ) : (
          <BlockControl code={code} onChanged={onChanged} />
        )
      ) : (
        <HiddenByScope what="Blocking and unblocking" scope="assets:create" />
      )}
      <ScanHistory gtin={code.gtin} serial={code.serialNumber} />
    </>
  );
}

/** Block the code (verifications answer COUNTERFEIT or SUSPICIOUS from now on) or lift its block (issue #21). */
function BlockControl({ code, onChanged }: { code: CodeDetail; onChanged: () => void }) {
  const [kind, setKind] = useState<BlockKind>('counterfeit');
  const [reason, setReason] = useState('');
  const [error, setError] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const blocked = code.blocked && code.blocked.status === 'active' ? code.blocked : null;
  // An entry may cover a range of serials: removing it unblocks every one of them.
  const covers =
    blocked?.serialFrom !== undefined && blocked.serialTo !== undefined && blocked.serialFrom !== blocked.serialTo
      ? `${code.gtin} / ${blocked.serialFrom} to ${blocked.serialTo}`
      : undefined;
  const act = async () => {
    setBusy(true);
    setError(undefined);
    try {
      if (blocked) await api.delete(`/blocklist/${encodeURIComponent(blocked.blockId)}`);
      else
        await api.create('/blocklist', {
          gtin: code.gtin,
          serial: code.serialNumber,
          kind,
          ...(reason.trim() ? { reason: reason.trim() } : {}),
        });
      setReason('');
      setConfirming(false);
      onChanged();
    } catch (caught) {
      setError(asApiError(caught));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="block-heading" class="panel">
      <h2 id="block-heading">{blocked ? 'Blocked' : 'Block this code'}</h2>
      <form
        class="form"
        onSubmit={(event) => {
          event.preventDefault();
          setError(undefined);
          setConfirming(true);
        }}
        noValidate
      >
        {blocked ? (
          <p>
            Verifications of this code answer with the block
            {blocked.reason ? (
              <>
                {' '}
                (<Quoted text={blocked.reason} />)
              </>
            ) : (
              ''
            )}
            {covers ? <>, an entry for every code of {covers}</> : ''}. Unblocking keeps the block in the record as removed.
          </p>
        ) : (
          <>
            <BlockKindField name="block-kind" kind={kind} onChange={setKind} />
            <Field
              id="block-reason"
              label="Reason (optional)"
              hint="Shown on your account’s own verifications only: other accounts and the public page see that the code is blocked, not why."
            >
              <input
                {...describedBy('block-reason', true, undefined)}
                maxLength={1000}
                value={reason}
                onInput={(event) => setReason(event.currentTarget.value)}
              />
            </Field>
          </>
        )}
        <button type="submit" class={blocked ? 'button secondary' : 'button danger'} disabled={busy}>
          {blocked ? 'Unblock' : 'Block code'}
        </button>
      </form>
      {confirming && (
        <Dialog
          title={blocked ? (covers ? 'Unblock the whole range?' : 'Unblock this code?') : 'Block this code?'}
          onClose={() => setConfirming(false)}
        >
          <p>
            {blocked
              ? covers
                ? `The entry covers every code of ${covers}: removing it unblocks all of them at once, on every server, unless another entry or a confirmed report still blocks one.`
                : 'Verifications stop answering with this block at once, on every server. The entry stays in the record as removed.'
              : `From now on every verification of this code, on every server and on the public page, answers ${kind === 'counterfeit' ? 'COUNTERFEIT' : 'SUSPICIOUS'}, until it is unblocked.`}
          </p>
          <DialogActions
            error={error}
            onCancel={() => setConfirming(false)}
            onConfirm={act}
            busy={busy}
            label={blocked ? 'Unblock' : 'Block code'}
            busyLabel={blocked ? 'Unblocking…' : 'Blocking…'}
            danger={!blocked}
          />
        </Dialog>
      )}
    </section>
  );
}

/**
 * A code blocked by a confirmed report (not by a blocklist entry): the block is the report's, so it
 * is lifted through the report (POST /code/reports/{reportId}/lift), for a confirmation made in error.
 */
function ReportBlock({
  code,
  reportId,
  reason,
  onChanged,
}: {
  code: CodeDetail;
  reportId: string;
  reason: string | null;
  onChanged: () => void;
}) {
  const [lifting, setLifting] = useState(false);
  return (
    <section aria-labelledby="block-heading" class="panel">
      <h2 id="block-heading">Blocked by a confirmed report</h2>
      <p>
        A report of this code was confirmed
        {reason ? (
          <>
            {' '}
            (<Quoted text={reason} />)
          </>
        ) : (
          ''
        )}
        : every verification of it answers SUSPICIOUS, a known counterfeit pattern. If the confirmation was a mistake, lift the
        block; the report and its confirmation stay in the record.
      </p>
      <p class="actions-row">
        <button type="button" class="button secondary" onClick={() => setLifting(true)}>
          Lift the block
        </button>
        <Link to="/reports?status=confirmed" class="button secondary">
          Confirmed reports
        </Link>
      </p>
      {lifting && (
        <DecideDialog
          report={{ reportId, gtin: code.gtin, serial: code.serialNumber, reason: null }}
          decision="lift"
          onClose={() => setLifting(false)}
          onDecided={() => {
            setLifting(false);
            onChanged();
          }}
        />
      )}
    </section>
  );
}

function ScanHistory({ gtin, serial }: { gtin: string; serial: string }) {
  const pages = useCursorPages();
  const scans = useLoad(
    () =>
      api.get<{ scans: ScanView[]; pagination: { nextCursor: string | null } }>('/scans', {
        gtin,
        serial,
        limit: 20,
        cursor: pages.cursor,
      }),
    [gtin, serial, pages.cursor],
  );
  return (
    <section aria-labelledby="history-heading" class="panel">
      <h2 id="history-heading">Scan history</h2>
      <LoadedView loaded={scans} what="scans" isEmpty={(data) => data.scans.length === 0} empty="This code was never scanned.">
        {(data) => (
          <>
            <TableScroll labelledBy="history-heading">
              <table>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Verdict</th>
                    <th scope="col">Scan no.</th>
                    <th scope="col">Risk flags</th>
                    <th scope="col">Country</th>
                    <th scope="col">Scanned by</th>
                  </tr>
                </thead>
                <tbody>
                  {data.scans.map((scan) => (
                    <tr key={scan.scanId}>
                      <td>{formatTime(scan.scannedAt)}</td>
                      <td>{verdictWords[scan.verdict] ?? scan.verdict}</td>
                      <td>{formatCount(scan.scanNumber)}</td>
                      <td>{scan.riskIndicators.length > 0 ? scanReasons(scan).join('; ') : '—'}</td>
                      <td>{scan.country ?? '—'}</td>
                      <td data-scanned-by={scan.scannedBy}>{scannedByWords(scan.scannedBy)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
            <Pager label="Scans" pages={pages} nextCursor={data.pagination.nextCursor} />
          </>
        )}
      </LoadedView>
    </section>
  );
}

/** Whether the code was reported, and what became of the report: a dismissed one is no warning. */
function ReportBadge({ status }: { status: 'pending' | 'confirmed' | 'dismissed' | 'lifted' }) {
  if (status === 'confirmed') return <Badge tone="bad">Reported: confirmed</Badge>;
  if (status === 'dismissed') return <Badge tone="neutral">Reported: dismissed</Badge>;
  if (status === 'lifted') return <Badge tone="neutral">Reported: block lifted</Badge>;
  return <Badge tone="warning">Reported: waiting for review</Badge>;
}
