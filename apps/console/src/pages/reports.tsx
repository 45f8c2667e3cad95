import { useState } from 'preact/hooks';
import { type ApiError, api, asApiError } from '../api.ts';
import { Badge, type BadgeTone } from '../components/badge.tsx';
import { Dialog, DialogActions } from '../components/dialog.tsx';
import { describedBy, Field } from '../components/field.tsx';
import { FilterTabs } from '../components/filter-tabs.tsx';
import { Notice, useNoticeOf } from '../components/notice.tsx';
import { Pager, useCursorPages } from '../components/pager.tsx';
import { Quoted } from '../components/quoted.tsx';
import { HiddenByScope, LoadedView } from '../components/states.tsx';
import { TableScroll } from '../components/table-scroll.tsx';
import { formatTime } from '../format.ts';
import { Link, type Location } from '../router.tsx';
import { holds } from '../scopes.ts';
import type { CodeReportView, Pagination, ReportStatus, SessionView } from '../types.ts';
import { useLoad } from '../use-load.ts';

// The review queue of the reports filed against the account's codes (GET /code/reports): a person
// confirms a report (the code verifies SUSPICIOUS, KNOWN_COUNTERFEIT_PATTERN, from then on),
// dismisses it, or lifts the block of
// one confirmed in error (POST /code/reports/{reportId}/confirm, …/dismiss, …/lift).

const statuses: ReadonlyArray<{ value: ReportStatus | ''; label: string }> = [
  { value: 'pending', label: 'Waiting for review' },
  { value: 'confirmed', label: 'Confirmed (blocking)' },
  { value: 'dismissed', label: 'Dismissed' },
  { value: 'lifted', label: 'Lifted' },
  { value: '', label: 'All' },
];

const statusBadge: Readonly<Record<ReportStatus, { tone: BadgeTone; label: string }>> = {
  pending: { tone: 'warning', label: 'Waiting' },
  confirmed: { tone: 'bad', label: 'Confirmed: blocking' },
  dismissed: { tone: 'neutral', label: 'Dismissed' },
  lifted: { tone: 'good', label: 'Lifted' },
};

export type ReportDecision = 'confirm' | 'dismiss' | 'lift';

/** What each decision says in its dialog, and what it does. */
const decisionWords: Readonly<Record<ReportDecision, { title: string; effect: string; button: string; reasonHint: string }>> = {
  confirm: {
    title: 'Confirm this report?',
    effect:
      'The code is blocked: from now on every verification of it answers SUSPICIOUS, a known counterfeit pattern, with your reason (its public page too), on every server. The report and its confirmation stay in the code’s history.',
    button: 'Confirm and block',
    reasonHint: 'Shown on verifications and the public page. Without one they show none: a reporter’s words are never published.',
  },
  dismiss: {
    title: 'Dismiss this report?',
    effect: 'Nothing changes for the code: it verifies as before. The dismissal stays in the code’s history.',
    button: 'Dismiss report',
    reasonHint: 'Kept in the code’s history (the compliance export).',
  },
  lift: {
    title: 'Lift this block?',
    effect:
      'For a confirmation made in error: the code verifies as it did before the confirmation, unless another confirmed report or a blocklist entry still blocks it. The confirmation and the lift both stay in the code’s history.',
    button: 'Lift the block',
    reasonHint: 'Kept in the code’s history (the compliance export).',
  },
};

/** The decisions a report in this status can take. */
export const decisionsFor = (status: ReportStatus): ReportDecision[] =>
  status === 'pending' ? ['confirm', 'dismiss'] : status === 'confirmed' ? ['lift'] : [];

const buttonLabel: Readonly<Record<ReportDecision, string>> = { confirm: 'Confirm', dismiss: 'Dismiss', lift: 'Lift block' };

const statusOf = (query: URLSearchParams): ReportStatus | '' => {
  const value = query.get('status') ?? 'pending';
  return statuses.some((status) => status.value === value) ? (value as ReportStatus | '') : 'pending';
};

export function ReportsPage({ session, location }: { session: SessionView; location: Location }) {
  const status = statusOf(location.query);
  // Another status is another list: its first page, with the form and the focus where they are.
  const pages = useCursorPages(status, 'reports');
  const reports = useLoad(
    () =>
      api.get<{ reports: CodeReportView[]; pagination: Pagination }>('/code/reports', {
        status,
        limit: 20,
        cursor: pages.cursor,
      }),
    [status, pages.cursor],
  );
  const [deciding, setDeciding] = useState<{ report: CodeReportView; decision: ReportDecision } | undefined>();
  // What a change did is said on the list it was made on (the status shown then), not on another.
  const [notice, setNotice] = useNoticeOf(status);
  const mayDecide = holds(session, 'assets:create');
  const shown = statuses.find((each) => each.value === status)?.label ?? 'All';

  return (
    <>
      <h1>Reports</h1>
      <p>
        Reports filed against your codes, by anyone who verified one (the API) or by a person on the public page. Confirming one
        blocks its code; a block confirmed in error can be lifted.
      </p>
      {!mayDecide && <HiddenByScope what="Confirming, dismissing and lifting" scope="assets:create" />}
      <FilterTabs label="Reports by status" tabs={statuses} current={status} path="/reports" />
      <Notice text={notice} />
      <section aria-labelledby="reports-heading" class="panel">
        <h2 id="reports-heading">{shown}</h2>
        <LoadedView
          loaded={reports}
          what="reports"
          isEmpty={(data) => data.reports.length === 0}
          empty={status === 'pending' ? 'No reports waiting for review.' : 'No reports here.'}
        >
          {(data) => (
            <>
              <TableScroll labelledBy="reports-heading">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Code</th>
                      <th scope="col">Reported</th>
                      <th scope="col">Reporter’s words</th>
                      <th scope="col">Status</th>
                      <th scope="col">Decision</th>
                      {mayDecide && <th scope="col">Actions</th>}
                    </tr>
                  </thead>
                  <tbody>
                    {data.reports.map((report) => (
                      <tr key={report.reportId} data-report={report.reportId}>
                        <th scope="row">
                          <Link to={`/codes/${encodeURIComponent(report.assetId)}`}>
                            <span class="code">{report.gtin}</span> / <span class="code">{report.serial}</span>
                          </Link>
                        </th>
                        <td>
                          {formatTime(report.reportedAt)}
                          <br />
                          <span class="muted">from {report.source === 'resolver' ? 'the public page' : 'the API'}</span>
                        </td>
                        <td>{report.reason ? <Quoted text={report.reason} /> : '—'}</td>
                        <td>
                          <Badge tone={statusBadge[report.status].tone}>{statusBadge[report.status].label}</Badge>
                        </td>
                        <td>
                          <DecisionSummary report={report} />
                        </td>
                        {mayDecide && (
                          <td class="row-actions">
                            {decisionsFor(report.status).map((decision) => (
                              <button
                                key={decision}
                                type="button"
                                class={decision === 'confirm' ? 'button danger' : 'button secondary'}
                                aria-label={`${buttonLabel[decision]}: ${report.gtin} / ${report.serial}`}
                                onClick={() => {
                                  setNotice(undefined);
                                  setDeciding({ report, decision });
                                }}
                              >
                                {buttonLabel[decision]}
                              </button>
                            ))}
                          </td>
                        )}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
              <Pager label="Reports" pages={pages} nextCursor={data.pagination.nextCursor} />
            </>
          )}
        </LoadedView>
      </section>
      {deciding && (
        <DecideDialog
          report={deciding.report}
          decision={deciding.decision}
          onClose={() => setDeciding(undefined)}
          // Decided elsewhere meanwhile (409): the row's buttons were for a status it no longer has.
          onStale={() => reports.reload()}
          onDecided={(decided) => {
            setDeciding(undefined);
            setNotice(
              `${decided.gtin} / ${decided.serial}: ${
                decided.status === 'confirmed'
                  ? 'confirmed, the code is blocked.'
                  : decided.status === 'lifted'
                    ? 'block lifted.'
                    : 'report dismissed.'
              }`,
            );
            // The report left the list it was in; show the list again from its first page.
            if (pages.page > 1) pages.reset();
            reports.reload();
          }}
        />
      )}
    </>
  );
}

function DecisionSummary({ report }: { report: CodeReportView }) {
  if (report.status === 'pending') return <>—</>;
  return (
    <>
      {report.status === 'dismissed' ? 'Dismissed' : 'Confirmed'} {formatTime(report.decidedAt)}
      {report.blockReason && (
        <>
          <br />
          <span class="muted">Shown: “{report.blockReason}”</span>
        </>
      )}
      {report.dismissReason && (
        <>
          <br />
          <span class="muted">Why: “{report.dismissReason}”</span>
        </>
      )}
      {report.status === 'lifted' && (
        <>
          <br />
          Lifted {formatTime(report.liftedAt)}
          {report.liftReason && <span class="muted"> (“{report.liftReason}”)</span>}
        </>
      )}
    </>
  );
}

/** Confirms, dismisses or lifts one report, with an optional reason; the API's refusal (say, decided meanwhile) shown in place. */
export function DecideDialog({
  report,
  decision,
  onClose,
  onStale,
  onDecided,
}: {
  report: Pick<CodeReportView, 'reportId' | 'gtin' | 'serial' | 'reason'>;
  decision: ReportDecision;
  onClose: () => void;
  /** The API refused the decision as the report's status changed meanwhile (409): what is shown is out of date. */
  onStale?: () => void;
  onDecided: (decided: CodeReportView) => void;
}) {
  const words = decisionWords[decision];
  const [reason, setReason] = useState('');
  const [error, setError] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);
  const decide = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const decided = await api.post<CodeReportView>(
        `/code/reports/${encodeURIComponent(report.reportId)}/${decision}`,
        reason.trim() ? { reason: reason.trim() } : {},
      );
      onDecided(decided);
    } catch (caught) {
      const refused = asApiError(caught);
      setError(refused);
      setBusy(false);
      if (refused.status === 409) onStale?.();
    }
  };
  return (
    <Dialog title={words.title} onClose={onClose}>
      <form class="form" onSubmit={decide} noValidate>
        <p>
          <span class="code">{report.gtin}</span> / <span class="code">{report.serial}</span>
          {report.reason && (
            <>
              {' '}
              · reported as <Quoted text={report.reason} />
            </>
          )}
        </p>
        <p>{words.effect}</p>
        <Field id="decision-reason" label="Reason (optional)" hint={words.reasonHint}>
          <input
            {...describedBy('decision-reason', true, undefined)}
            maxLength={1000}
            value={reason}
            onInput={(event) => setReason(event.currentTarget.value)}
          />
        </Field>
        <DialogActions
          error={error}
          onCancel={onClose}
          busy={busy}
          label={words.button}
          busyLabel="Saving…"
          danger={decision === 'confirm'}
        />
      </form>
    </Dialog>
  );
}
