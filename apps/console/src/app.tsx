import { useEffect, useRef, useState } from 'preact/hooks';
import { type ApiError, asApiError, whenSessionEnds } from './api.ts';
import { Dialog } from './components/dialog.tsx';
import { ErrorMessage, HiddenByScope, Loading } from './components/states.tsx';
import { BlocklistPage } from './pages/blocklist.tsx';
import { CodePage } from './pages/code.tsx';
import { CodesPage } from './pages/codes.tsx';
import { GenerateBatchPage } from './pages/generate-batch.tsx';
import { GenerateCodePage } from './pages/generate-code.tsx';
import { KeysPage } from './pages/keys.tsx';
import { OverviewPage } from './pages/overview.tsx';
import { ReportsPage } from './pages/reports.tsx';
import { SignInForm, SignInPage } from './pages/sign-in.tsx';
import { UsagePage } from './pages/usage.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { Link, type Location, navigate, useLocation } from './router.tsx';
import { holds } from './scopes.ts';
import { currentSession, signOut, switchEnvironment } from './session.ts';
import type { Environment, SessionView } from './types.ts';

interface NavItem {
  to: string;
  label: string;
  /** The scope the page needs; none: any key. */
  scope?: string;
  /** Left out for a key that holds this scope: the page is reached from another one it can see. */
  reachedElsewhereWith?: string;
  /** A page a key restricted to some GTINs can use (docs/API.md, "Resource restrictions"): it names one of them. */
  forRestrictedKeys?: boolean;
}

const navItems: NavItem[] = [
  { to: '/', label: 'Overview', scope: 'assets:read' },
  { to: '/codes', label: 'Codes', scope: 'assets:read', forRestrictedKeys: true },
  // A key that may generate but not read codes has no Codes page to start from.
  {
    to: '/codes/new',
    label: 'Generate codes',
    scope: 'assets:create',
    reachedElsewhereWith: 'assets:read',
    forRestrictedKeys: true,
  },
  { to: '/reports', label: 'Reports', scope: 'assets:read' },
  { to: '/blocklist', label: 'Blocklist', scope: 'assets:read', forRestrictedKeys: true },
  { to: '/settings/keys', label: 'Settings: API keys', scope: 'keys:read' },
  { to: '/settings/webhooks', label: 'Settings: Webhooks', scope: 'keys:read' },
  { to: '/usage', label: 'Usage' },
];

/** The pages a key restricted to some GTINs can use: its codes and its blocks, each listed for one GTIN. */
const forRestrictedKeys = (path: string) => path === '/codes' || path.startsWith('/codes/') || path === '/blocklist';

/** The page for a location, and the scope it needs. */
function route(location: Location, session: SessionView): { title: string; scope?: string; view: () => preact.JSX.Element } {
  const { path } = location;
  if (path === '/') return { title: 'Overview', scope: 'assets:read', view: () => <OverviewPage /> };
  if (path === '/codes')
    return { title: 'Codes', scope: 'assets:read', view: () => <CodesPage session={session} location={location} /> };
  if (path === '/codes/new')
    return { title: 'Generate a code', scope: 'assets:create', view: () => <GenerateCodePage session={session} /> };
  if (path === '/codes/batch') return { title: 'Generate a batch', scope: 'assets:create', view: () => <GenerateBatchPage /> };
  if (path.startsWith('/codes/')) {
    const assetId = decodeURIComponent(path.slice('/codes/'.length));
    return { title: 'Code', scope: 'assets:read', view: () => <CodePage assetId={assetId} session={session} /> };
  }
  if (path === '/reports')
    return {
      title: 'Reports',
      scope: 'assets:read',
      // Not keyed by the status: a status tab keeps the focus, the page its state (useCursorPages(status)).
      view: () => <ReportsPage session={session} location={location} />,
    };
  if (path === '/blocklist')
    return {
      title: 'Blocklist',
      scope: 'assets:read',
      // As the reports: another status is another list of the same page.
      view: () => <BlocklistPage session={session} location={location} />,
    };
  // Settings → API keys, where the spec puts key management; /keys is kept as a short link to it.
  if (path === '/settings/keys' || path === '/keys')
    return { title: 'API keys', scope: 'keys:read', view: () => <KeysPage session={session} /> };
  if (path === '/settings/webhooks')
    return { title: 'Webhooks', scope: 'keys:read', view: () => <WebhooksPage session={session} /> };
  if (path === '/usage') return { title: 'Usage', view: () => <UsagePage session={session} /> };
  return {
    title: 'Page not found',
    view: () => (
      <>
        <h1>Page not found</h1>
        <p>
          The console has no page at this address. <Link to="/">Go to the overview</Link>.
        </p>
      </>
    ),
  };
}

type SessionState =
  | { state: 'checking' }
  | { state: 'signed-out'; notice?: string }
  | { state: 'failed'; error: ApiError }
  /** `ended`: the session ended on this page (why): it stays, under a dialog that signs in again. */
  | { state: 'signed-in'; session: SessionView; generation: number; ended?: string };

export function App() {
  const [current, setCurrent] = useState<SessionState>({ state: 'checking' });
  const location = useLocation();

  const check = () => {
    setCurrent({ state: 'checking' });
    currentSession().then(
      (session) => setCurrent({ state: 'signed-in', session, generation: 0 }),
      (error: unknown) => {
        const failure = asApiError(error);
        setCurrent(failure.status === 401 ? { state: 'signed-out' } : { state: 'failed', error: failure });
      },
    );
  };
  useEffect(() => {
    // Any 401 (signed out elsewhere, idle or absolute expiry, the key revoked) ends the session here
    // too. The page stays, under a dialog that signs in again, so a form half filled is not lost
    // (before, the sign-in page replaced it).
    whenSessionEnds((error) =>
      setCurrent((previous) => (previous.state === 'signed-in' ? { ...previous, ended: error.message } : previous)),
    );
    check();
  }, []);

  if (current.state === 'checking')
    return (
      <main id="main" class="sign-in">
        <Loading what="your session" />
      </main>
    );
  if (current.state === 'failed')
    return (
      <main id="main" class="sign-in">
        <h1>The console could not start</h1>
        <ErrorMessage error={current.error} retry={check} />
      </main>
    );
  if (current.state === 'signed-out')
    return (
      <SignInPage
        {...(current.notice ? { notice: current.notice } : {})}
        onSignedIn={(session) => setCurrent({ state: 'signed-in', session, generation: 0 })}
      />
    );
  // Signed in again as the same account in the same environment, the page and what it holds stay.
  const signedInAgain = (session: SessionView) =>
    setCurrent((previous) =>
      previous.state === 'signed-in' &&
      previous.session.account.id === session.account.id &&
      previous.session.session.environment === session.session.environment
        ? { state: 'signed-in', session, generation: previous.generation }
        : { state: 'signed-in', session, generation: 0 },
    );
  return (
    <>
      <SignedIn
        key={`${current.session.account.id}/${current.session.session.environment}`}
        session={current.session}
        generation={current.generation}
        location={location}
        onSession={(session) =>
          setCurrent((previous) => ({
            state: 'signed-in',
            session,
            generation: previous.state === 'signed-in' ? previous.generation + 1 : 0,
          }))
        }
        onSignedOut={() => setCurrent({ state: 'signed-out', notice: 'You are signed out.' })}
      />
      {current.ended !== undefined && (
        <SessionEndedDialog
          why={current.ended}
          session={current.session}
          onSignedIn={signedInAgain}
          onLeave={() => setCurrent({ state: 'signed-out', notice: `Your session ended: ${current.ended}` })}
        />
      )}
    </>
  );
}

/**
 * A session that ended while a page was open: sign in again here, and the page, with what was typed
 * in it, is as it was (send the form again). With a key of another account or environment the
 * console starts over on its pages.
 */
function SessionEndedDialog({
  why,
  session,
  onSignedIn,
  onLeave,
}: {
  why: string;
  session: SessionView;
  onSignedIn: (session: SessionView) => void;
  onLeave: () => void;
}) {
  return (
    <Dialog title="Your session ended" onClose={onLeave}>
      <p class="notice" role="status">
        {why}
      </p>
      <p>
        What you typed on this page is kept. Sign in again with a key of <strong>{session.account.name}</strong> (
        {session.session.environment}) to go on where you were, then send it again.
      </p>
      <SignInForm onSignedIn={onSignedIn} />
      <button type="button" class="button secondary" onClick={onLeave}>
        Leave this page
      </button>
    </Dialog>
  );
}

function SignedIn({
  session,
  generation,
  location,
  onSession,
  onSignedOut,
}: {
  session: SessionView;
  generation: number;
  location: Location;
  onSession: (session: SessionView) => void;
  onSignedOut: () => void;
}) {
  const [problem, setProblem] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);
  const environment = session.session.environment;
  const page = route(location, session);

  useEffect(() => {
    document.title = `${page.title} · Hallmark console (${environment})`;
  }, [page.title, environment]);

  // After moving to another page, focus goes to its content (as a page load would start there), so
  // keyboard and screen-reader users are not left on the link they followed.
  const shownPath = useRef(location.path);
  useEffect(() => {
    if (shownPath.current === location.path) return;
    shownPath.current = location.path;
    document.getElementById('main')?.focus();
  }, [location.path]);

  const leave = async () => {
    setBusy(true);
    try {
      await signOut();
      onSignedOut();
    } catch (error) {
      setProblem(asApiError(error));
    } finally {
      setBusy(false);
    }
  };

  const switchTo = async (next: Environment) => {
    if (next === environment) return;
    setBusy(true);
    setProblem(undefined);
    try {
      // Every page is loaded anew in the other environment (SignedIn's children are keyed by it):
      // nothing of the one stays on screen in the other.
      onSession(await switchEnvironment(next));
      if (location.path.startsWith('/codes/') && location.path !== '/codes/new' && location.path !== '/codes/batch')
        navigate('/codes', { replace: true });
    } catch (error) {
      setProblem(asApiError(error));
    } finally {
      setBusy(false);
    }
  };

  const hidden = navItems.filter((item) => item.scope && !holds(session, item.scope) && !item.reachedElsewhereWith);
  const restricted = session.key.restrictions ?? null;
  const closedToRestricted = restricted ? navItems.filter((item) => !item.forRestrictedKeys) : [];
  return (
    <div class={`layout env-${environment}`}>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top">
        <div class="top-row">
          <p class="brand">
            Hallmark <span class="brand-sub">console</span>
          </p>
          <p class="who">
            <span class="account">{session.account.name}</span>
            <span class="key-name">
              signed in with the key “<span class="code">{session.key.name}</span>”{session.key.isOperator && ' (operator)'}
              {session.key.restrictions && (
                <>
                  , restricted to GTINs <span class="code">{session.key.restrictions.gtins.join(', ')}</span>
                </>
              )}
            </span>
          </p>
          <div class="top-actions">
            {session.environments.length > 1 ? (
              <fieldset class="env-switch">
                <legend>Environment</legend>
                {session.environments.map((option) => (
                  <label key={option} class={option === environment ? 'env-option selected' : 'env-option'}>
                    <input
                      type="radio"
                      name="environment"
                      value={option}
                      checked={option === environment}
                      disabled={busy}
                      onChange={() => void switchTo(option)}
                    />
                    {option === 'live' ? 'Live' : 'Test'}
                  </label>
                ))}
              </fieldset>
            ) : (
              <p class="env-only">
                Environment: <strong>{environment === 'live' ? 'Live' : 'Test'}</strong>
              </p>
            )}
            <button type="button" class="button secondary" onClick={leave} disabled={busy}>
              Sign out
            </button>
          </div>
        </div>
        {environment === 'test' && (
          <p class="env-banner" role="note">
            Test environment: you are seeing test data only.
          </p>
        )}
        {problem && <ErrorMessage error={problem} />}
        <nav class="main-nav" aria-label="Console">
          <ul>
            {navItems
              .filter((item) => !restricted || item.forRestrictedKeys)
              .filter((item) => !item.scope || holds(session, item.scope))
              .filter((item) => !item.reachedElsewhereWith || !holds(session, item.reachedElsewhereWith))
              .map((item) => {
                const active = item.to === '/' ? location.path === '/' : location.path.startsWith(item.to);
                return (
                  <li key={item.to}>
                    <Link to={item.to} aria-current={active ? 'page' : undefined}>
                      {item.label}
                    </Link>
                  </li>
                );
              })}
          </ul>
          {hidden.length > 0 && (
            <p class="nav-hidden">
              Not shown for this key:{' '}
              {hidden.map((item, index) => (
                <span key={item.to}>
                  {index > 0 && ', '}
                  {item.label} (needs <span class="code">{item.scope}</span>)
                </span>
              ))}
              .
            </p>
          )}
          {closedToRestricted.length > 0 && (
            <p class="nav-hidden">
              Not shown for this key, restricted to some GTINs: {closedToRestricted.map((item) => item.label).join(', ')}.
            </p>
          )}
        </nav>
      </header>
      <main id="main" tabIndex={-1} key={`${environment}-${generation}`}>
        {page.scope && !holds(session, page.scope) ? (
          <>
            <h1>{page.title}</h1>
            <HiddenByScope what="This page" scope={page.scope} />
          </>
        ) : restricted && !forRestrictedKeys(location.path) ? (
          <>
            <h1>{page.title}</h1>
            <p class="state state-hidden">
              This page is hidden: the key you signed in with is restricted to the GTINs{' '}
              <span class="code">{restricted.gtins.join(', ')}</span>. Its codes and blocks are under Codes and Blocklist.
            </p>
          </>
        ) : (
          page.view()
        )}
      </main>
    </div>
  );
}
