import { api } from '../api.ts';
import { Pager, useCursorPages } from '../components/pager.tsx';
import { HiddenByScope, LoadedView } from '../components/states.tsx';
import { TableScroll } from '../components/table-scroll.tsx';
import { formatCount, formatTime } from '../format.ts';
import { holds } from '../scopes.ts';
import type { DataPage, KeyUsage, SessionView, Usage } from '../types.ts';
import { type Loaded, useLoad } from '../use-load.ts';

const quotaWords: Readonly<Record<string, string>> = {
  generate: 'Codes generated today',
  verify: 'Verifications today',
  requests: 'Requests today, all keys together',
};

/**
 * The limits as the API applies them: the daily request quota (test only; live has none) and the
 * per-second rate limit, both the account's in its environment, shared by all its keys. A key's
 * requests of a clock minute are measured against the most the per-second limit lets through in
 * one (limit × 60): there is no per-minute limit of its own.
 */
export function limitsOf(usage: Usage): { requestsPerDay: number | null; perSecond: number; mostInAMinute: number } {
  const perSecond = usage.rateLimit.limit / usage.rateLimit.windowSeconds;
  return {
    requestsPerDay: usage.quotas.find((quota) => quota.name === 'requests')?.limit ?? null,
    perSecond,
    mostInAMinute: Math.floor(perSecond * 60),
  };
}

/** Today's use against the tier's daily quotas and the per-second rate limit, and, with keys:read, per key. */
export function UsagePage({ session }: { session: SessionView }) {
  const usage = useLoad(() => api.get<Usage>('/usage'), []);
  return (
    <>
      <h1>Usage</h1>
      <section aria-labelledby="quotas-heading" class="panel">
        <h2 id="quotas-heading">Today</h2>
        <LoadedView loaded={usage} what="usage">
          {(data) => {
            const limits = limitsOf(data);
            return (
              <>
                <p class="lead">
                  Tier <strong>{data.tier}</strong>, {data.environment} environment, day {data.day} (UTC). Quotas start again at{' '}
                  {formatTime(data.resetsAt)}.
                </p>
                <ul class="quotas">
                  {data.quotas.map((quota) => {
                    const id = `quota-${quota.name}`;
                    return (
                      <li key={quota.name} class="quota">
                        <label for={id}>
                          {quotaWords[quota.name] ?? quota.name}: <strong>{formatCount(quota.used)}</strong>
                          {quota.limit === null ? ' (no daily limit)' : ` of ${formatCount(quota.limit)}`}
                        </label>
                        {quota.limit !== null && (
                          <meter
                            id={id}
                            min={0}
                            max={quota.limit}
                            value={Math.min(quota.used, quota.limit)}
                            high={quota.limit * 0.8}
                          >
                            {quota.used} of {quota.limit}
                          </meter>
                        )}
                      </li>
                    );
                  })}
                </ul>
                <p class="rate-limit">
                  Rate limit: <strong>{formatCount(limits.perSecond)} requests a second</strong> for the account in the{' '}
                  {data.environment} environment, all its keys together: at most {formatCount(limits.mostInAMinute)} in a minute.
                  A request beyond it is refused (<span class="code">429 RATE_LIMITED</span>) until the next second; there is no
                  separate per-minute limit.
                </p>
              </>
            );
          }}
        </LoadedView>
      </section>
      <section aria-labelledby="key-usage-heading" class="panel">
        <h2 id="key-usage-heading">By key</h2>
        {holds(session, 'keys:read') ? (
          <KeyRequests usage={usage} />
        ) : (
          <HiddenByScope what="The table of each key’s requests" scope="keys:read" />
        )}
      </section>
    </>
  );
}

/** Each key's requests today and this minute, against the limits its account's keys share (GET /usage/keys, keys:read). */
function KeyRequests({ usage }: { usage: Loaded<Usage> }) {
  const pages = useCursorPages();
  const keys = useLoad(() => api.get<DataPage<KeyUsage>>('/usage/keys', { limit: 20, cursor: pages.cursor }), [pages.cursor]);
  const limits = usage.state === 'ready' ? limitsOf(usage.data) : undefined;
  const perDay = limits?.requestsPerDay ?? null;
  return (
    <>
      {limits && (
        <p class="hint" id="key-usage-limits">
          The keys share the account’s limits.{' '}
          {perDay === null
            ? `The ${usage.data?.environment} environment has no daily request quota: today’s requests are only counted.`
            : `Today’s requests count toward the daily quota of ${formatCount(perDay)} requests that all keys share.`}{' '}
          This minute’s requests (the current clock minute) are shown against {formatCount(limits.mostInAMinute)}: the most the
          rate limit of {formatCount(limits.perSecond)} a second lets through in a minute.
        </p>
      )}
      <LoadedView loaded={keys} what="key usage" isEmpty={(data) => data.data.length === 0} empty="No keys in this environment.">
        {(data) => (
          <>
            <TableScroll labelledBy="key-usage-heading">
              <table class="key-usage">
                <thead>
                  <tr>
                    <th scope="col">Key</th>
                    <th scope="col">
                      Requests today
                      {limits && (
                        <span class="block muted">{perDay === null ? 'no daily quota' : 'of the shared daily quota'}</span>
                      )}
                    </th>
                    <th scope="col">
                      This minute
                      {limits && <span class="block muted">of the most a minute allows</span>}
                    </th>
                    <th scope="col">Last used</th>
                  </tr>
                </thead>
                <tbody>
                  {data.data.map((key) => (
                    <tr key={key.keyId} data-key-id={key.keyId}>
                      <th scope="row">{key.name}</th>
                      <td data-requests="today">
                        {formatCount(key.requestsToday)}
                        {perDay !== null && ` of ${formatCount(perDay)}`}
                      </td>
                      <td data-requests="minute">
                        {formatCount(key.requestsThisMinute)}
                        {limits && ` of ${formatCount(limits.mostInAMinute)}`}
                      </td>
                      <td>{formatTime(key.lastUsedAt, 'never')}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
            <Pager label="Key usage" pages={pages} nextCursor={data.nextCursor} />
          </>
        )}
      </LoadedView>
    </>
  );
}
