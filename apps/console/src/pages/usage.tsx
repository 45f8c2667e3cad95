import { api } from '../api.ts';
import { Pager, useCursorPages } from '../components/pager.tsx';
import { LoadedView } from '../components/states.tsx';
import { TableScroll } from '../components/table-scroll.tsx';
import { formatCount, formatTime } from '../format.ts';
import type { DataPage, KeyUsage, Usage } from '../types.ts';
import { useLoad } from '../use-load.ts';

const quotaWords: Readonly<Record<string, string>> = {
  generate: 'Codes generated today',
  verify: 'Verifications today',
  requests: 'Requests today',
};

/** Today's use against the tier's daily quotas and the per-minute limit, and per key. */
export function UsagePage() {
  const usage = useLoad(() => api.get<Usage>('/usage'), []);
  const pages = useCursorPages();
  const keys = useLoad(() => api.get<DataPage<KeyUsage>>('/usage/keys', { limit: 20, cursor: pages.cursor }), [pages.cursor]);
  return (
    <>
      <h1>Usage</h1>
      <section aria-labelledby="quotas-heading" class="panel">
        <h2 id="quotas-heading">Today</h2>
        <LoadedView loaded={usage} what="usage">
          {(data) => (
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
              <p>
                Rate limit: <strong>{formatCount(data.rateLimit.limit)}</strong> requests per{' '}
                {data.rateLimit.windowSeconds === 1 ? 'second' : `${data.rateLimit.windowSeconds} seconds`} for each key.
              </p>
            </>
          )}
        </LoadedView>
      </section>
      <section aria-labelledby="key-usage-heading" class="panel">
        <h2 id="key-usage-heading">By key</h2>
        <LoadedView loaded={keys} what="key usage" isEmpty={(data) => data.data.length === 0} empty="No key was used today.">
          {(data) => (
            <>
              <TableScroll labelledBy="key-usage-heading">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Key</th>
                      <th scope="col">Requests today</th>
                      <th scope="col">This minute</th>
                      <th scope="col">Last used</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.data.map((key) => (
                      <tr key={key.keyId}>
                        <th scope="row">{key.name}</th>
                        <td>{formatCount(key.requestsToday)}</td>
                        <td>{formatCount(key.requestsThisMinute)}</td>
                        <td>{formatTime(key.lastUsedAt, 'never')}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
              <Pager
                label="Key usage"
                page={pages.page}
                nextCursor={data.nextCursor}
                onNext={pages.next}
                onPrevious={pages.previous}
              />
            </>
          )}
        </LoadedView>
      </section>
    </>
  );
}
