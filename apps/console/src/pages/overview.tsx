import { api } from '../api.ts';
import { Quoted } from '../components/quoted.tsx';
import { LoadedView } from '../components/states.tsx';
import { TableScroll } from '../components/table-scroll.tsx';
import { VerdictChart, type VerdictCounts, type VerdictPeriod } from '../components/verdict-chart.tsx';
import { formatCount, formatTime, scannedByWords, scanReasons, verdictWords } from '../format.ts';
import { type Period, periodRange, periods } from '../periods.ts';
import { Link } from '../router.tsx';
import type { CodeReportView, ScanAggregates, ScanView } from '../types.ts';
import { useLoad } from '../use-load.ts';

/** Verdict counts of a period, summed from the API's aggregate buckets (never from single scans). */
async function verdictsOver(period: Period, now: Date): Promise<VerdictCounts> {
  const { from, to } = periodRange(period, now);
  const aggregates = await api.get<ScanAggregates>('/scans/aggregates', {
    groupBy: 'verdict',
    bucket: period.bucket,
    from: from.toISOString(),
    to: to.toISOString(),
  });
  const counts: VerdictCounts = { AUTHENTIC: 0, SUSPICIOUS: 0, COUNTERFEIT: 0 };
  for (const { counts: inBucket } of aggregates.buckets) {
    for (const verdict of ['AUTHENTIC', 'SUSPICIOUS', 'COUNTERFEIT'] as const) counts[verdict] += inBucket[verdict] ?? 0;
  }
  return counts;
}

const utcDay = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
const utcHour = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'UTC' });

/** What each period covers, in words: whole UTC hours and days, the current one so far included. */
function periodsInWords(now: Date): string {
  const start = (id: Period['id']) => periodRange(periods.find((period) => period.id === id)!, now).from;
  const hours = start('24h');
  return (
    `Whole UTC hours and days, the current one so far included: the last 24 hours are this hour and the 23 before it ` +
    `(from ${utcHour.format(hours)} on ${utcDay.format(hours)}), the last 7 days today and the 6 days before (from ` +
    `${utcDay.format(start('7d'))}), the last 30 days today and the 29 days before (from ${utcDay.format(start('30d'))}).`
  );
}

const codesLink = (gtin: string, serial: string) =>
  `/codes?gtin=${encodeURIComponent(gtin)}&serial=${encodeURIComponent(serial)}`;

export function OverviewPage() {
  const verdicts = useLoad<{ now: Date; periods: Array<VerdictPeriod & Period> }>(async () => {
    const now = new Date();
    return {
      now,
      periods: await Promise.all(periods.map(async (period) => ({ ...period, counts: await verdictsOver(period, now) }))),
    };
  }, []);
  return (
    <>
      <h1>Overview</h1>
      <section aria-labelledby="verdicts-heading" class="panel">
        <h2 id="verdicts-heading">Verdicts</h2>
        <LoadedView loaded={verdicts} what="verdict counts">
          {({ now, periods: data }) => (
            <>
              <div class="chart-and-table">
                <VerdictChart periods={data.map((period) => ({ label: period.short, counts: period.counts }))} />
                <TableScroll labelledBy="verdict-table-caption">
                  <table class="verdict-table">
                    <caption id="verdict-table-caption">Scans by verdict</caption>
                    <thead>
                      <tr>
                        <th scope="col">Period</th>
                        <th scope="col">Authentic</th>
                        <th scope="col">Suspicious</th>
                        <th scope="col">Counterfeit</th>
                      </tr>
                    </thead>
                    <tbody>
                      {data.map((period) => (
                        <tr key={period.id} data-period={period.id}>
                          <th scope="row">{period.label}</th>
                          <td data-verdict="AUTHENTIC">{formatCount(period.counts.AUTHENTIC)}</td>
                          <td data-verdict="SUSPICIOUS">{formatCount(period.counts.SUSPICIOUS)}</td>
                          <td data-verdict="COUNTERFEIT">{formatCount(period.counts.COUNTERFEIT)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableScroll>
              </div>
              <p class="hint period-note">{periodsInWords(now)}</p>
            </>
          )}
        </LoadedView>
      </section>
      <RecentScans verdict="SUSPICIOUS" />
      <RecentScans verdict="COUNTERFEIT" />
      <ReportedCodes />
    </>
  );
}

function RecentScans({ verdict }: { verdict: 'SUSPICIOUS' | 'COUNTERFEIT' }) {
  const scans = useLoad(() => api.get<{ scans: ScanView[] }>('/scans', { verdict, limit: 10 }), [verdict]);
  const id = `recent-${verdict.toLowerCase()}`;
  const words = verdictWords[verdict]!.toLowerCase();
  return (
    <section aria-labelledby={id} class="panel">
      <h2 id={id}>Recent {words} scans</h2>
      <LoadedView loaded={scans} what={`${words} scans`} isEmpty={(data) => data.scans.length === 0} empty={`No ${words} scans.`}>
        {(data) => (
          <TableScroll labelledBy={id}>
            <table>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Code</th>
                  <th scope="col">Why</th>
                  <th scope="col">Scan no.</th>
                  <th scope="col">Country</th>
                  <th scope="col">Scanned by</th>
                </tr>
              </thead>
              <tbody>
                {data.scans.map((scan) => (
                  <tr key={scan.scanId}>
                    <td>{formatTime(scan.scannedAt)}</td>
                    <td>
                      <Link to={codesLink(scan.gtin, scan.serial)}>
                        <span class="code">{scan.gtin}</span> / <span class="code">{scan.serial}</span>
                      </Link>
                    </td>
                    <td>
                      {scan.riskIndicators.length > 0
                        ? scanReasons(scan).join('; ')
                        : verdict === 'COUNTERFEIT'
                          ? 'Signature does not match'
                          : '—'}
                      {scan.reported && ' · reported'}
                    </td>
                    <td>{formatCount(scan.scanNumber)}</td>
                    <td>{scan.country ?? '—'}</td>
                    <td data-scanned-by={scan.scannedBy}>{scannedByWords(scan.scannedBy)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </LoadedView>
    </section>
  );
}

function ReportedCodes() {
  const reports = useLoad(() => api.get<{ reports: CodeReportView[] }>('/code/reports', { status: 'pending', limit: 10 }), []);
  return (
    <section aria-labelledby="reported-heading" class="panel">
      <h2 id="reported-heading">Reported codes waiting for review</h2>
      <LoadedView
        loaded={reports}
        what="reported codes"
        isEmpty={(data) => data.reports.length === 0}
        empty="No reports waiting for review."
      >
        {(data) => (
          <ul class="report-list">
            {data.reports.map((report) => (
              <li key={report.reportId}>
                <Link to={`/codes/${encodeURIComponent(report.assetId)}`}>
                  <span class="code">{report.gtin}</span> / <span class="code">{report.serial}</span>
                </Link>{' '}
                <span class="muted">
                  {formatTime(report.reportedAt)} · from {report.source === 'resolver' ? 'the public page' : 'the API'}
                </span>
                {report.reason && (
                  <p class="report-reason">
                    <Quoted text={report.reason} />
                  </p>
                )}
              </li>
            ))}
          </ul>
        )}
      </LoadedView>
      <p>
        <Link to="/reports">Review reports</Link>
      </p>
    </section>
  );
}
