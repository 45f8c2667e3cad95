import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { describedBy, Field } from '../components/field.tsx';
import { Pager, useCursorPages } from '../components/pager.tsx';
import { LoadedView } from '../components/states.tsx';
import { TableScroll } from '../components/table-scroll.tsx';
import { formatTime } from '../format.ts';
import { asGtin14 } from '../gtin.ts';
import { searchOfPastedLink } from '../pasted-link.ts';
import { Link, type Location, navigate } from '../router.tsx';
import { holds, restrictedGtin } from '../scopes.ts';
import type { CodeSummary, DataPage, SessionView } from '../types.ts';
import { useLoad } from '../use-load.ts';

interface Search {
  gtin: string;
  serial: string;
  batch: string;
}

/** The search in the address; a key restricted to some GTINs searches its first by default (it lists one at a time). */
const searchOf = (query: URLSearchParams, session: SessionView): Search => ({
  gtin: query.get('gtin') ?? restrictedGtin(session) ?? '',
  serial: query.get('serial') ?? '',
  batch: query.get('batch') ?? '',
});

/** Codes, newest first, searched by GTIN, serial and batch on the server (GET /codes pages with a cursor). */
export function CodesPage({ session, location }: { session: SessionView; location: Location }) {
  const search = searchOf(location.query, session);
  const key = `${search.gtin}|${search.serial}|${search.batch}`;
  const [form, setForm] = useState<Search>(search);
  // A search reached by the browser's Back or Forward shows in the form as in the list.
  useEffect(() => setForm(search), [key]);
  const [gtinError, setGtinError] = useState<string | undefined>();
  // Another search is another list: its first page (a cursor of one search never goes with another).
  const pages = useCursorPages(key, 'codes');
  const codes = useLoad(
    () =>
      api.get<DataPage<CodeSummary>>('/codes', {
        gtin: search.gtin,
        serial: search.serial,
        batch: search.batch,
        limit: 20,
        cursor: pages.cursor,
      }),
    [key, pages.cursor],
  );

  const submit = (event: Event) => {
    event.preventDefault();
    // A code's link pasted in the GTIN field searches for that code.
    const asked = searchOfPastedLink(form.gtin) ?? form;
    if (asked !== form) setForm(asked);
    const gtin = asked.gtin.trim();
    if (gtin && !/^\d{8,14}$/.test(gtin)) {
      setGtinError('A GTIN is 8 to 14 digits, or paste a code’s whole link.');
      return;
    }
    setGtinError(undefined);
    pages.reset();
    const query = new URLSearchParams();
    if (gtin) query.set('gtin', asGtin14(gtin));
    if (asked.serial.trim()) query.set('serial', asked.serial.trim());
    if (asked.batch.trim()) query.set('batch', asked.batch.trim());
    const text = query.toString();
    navigate(text ? `/codes?${text}` : '/codes');
  };
  const searching = Boolean(search.gtin || search.serial || search.batch);

  return (
    <>
      <h1>Codes</h1>
      {holds(session, 'assets:create') ? (
        <p class="actions-row">
          <Link to="/codes/new" class="button">
            Generate a code
          </Link>
          <Link to="/codes/batch" class="button secondary">
            Generate a batch from CSV
          </Link>
        </p>
      ) : (
        <p class="state state-hidden">
          Generating codes is hidden: the key you signed in with does not hold the <span class="code">assets:create</span> scope.
        </p>
      )}
      <form class="form search-form" aria-label="Search codes" onSubmit={submit} noValidate>
        <Field id="search-gtin" label="GTIN" hint="Or paste a code’s link." error={gtinError}>
          <input
            {...describedBy('search-gtin', true, gtinError)}
            value={form.gtin}
            onInput={(event) => setForm({ ...form, gtin: event.currentTarget.value })}
          />
        </Field>
        <Field id="search-serial" label="Serial" hint="The whole serial: capitals and small letters differ.">
          <input
            {...describedBy('search-serial', true, undefined)}
            value={form.serial}
            onInput={(event) => setForm({ ...form, serial: event.currentTarget.value })}
          />
        </Field>
        <Field id="search-batch" label="Batch">
          <input
            id="search-batch"
            value={form.batch}
            onInput={(event) => setForm({ ...form, batch: event.currentTarget.value })}
          />
        </Field>
        <div class="form-buttons">
          <button type="submit" class="button">
            Search
          </button>
          {searching && (
            <button
              type="button"
              class="button secondary"
              onClick={() => {
                setForm({ gtin: '', serial: '', batch: '' });
                pages.reset();
                navigate('/codes');
              }}
            >
              Clear
            </button>
          )}
        </div>
      </form>
      <section aria-labelledby="codes-heading" class="panel">
        <h2 id="codes-heading">{searching ? 'Codes found' : 'Newest codes'}</h2>
        {/* A search the form refused shows no list: the codes of the search before would read as its results. */}
        {gtinError ? (
          <p class="state">Correct the search above to see its codes.</p>
        ) : (
          <LoadedView
            loaded={codes}
            what="codes"
            isEmpty={(data) => data.data.length === 0}
            empty={searching ? 'No code matches this search.' : 'No codes yet in this environment.'}
          >
            {(data) => (
              <>
                <TableScroll labelledBy="codes-heading">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">GTIN</th>
                        <th scope="col">Serial</th>
                        <th scope="col">Batch</th>
                        <th scope="col">Expiry</th>
                        <th scope="col">Created</th>
                      </tr>
                    </thead>
                    <tbody>
                      {data.data.map((code) => (
                        <tr key={code.assetId}>
                          <td class="code">{code.gtin}</td>
                          <th scope="row">
                            <Link to={`/codes/${encodeURIComponent(code.assetId)}`}>
                              <span class="code">{code.serialNumber}</span>
                            </Link>
                          </th>
                          <td>{code.batchNumber ?? '—'}</td>
                          <td>{code.expiryDate ?? '—'}</td>
                          <td>{formatTime(code.createdAt)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableScroll>
                <Pager label="Codes" pages={pages} nextCursor={data.nextCursor} />
              </>
            )}
          </LoadedView>
        )}
      </section>
    </>
  );
}
