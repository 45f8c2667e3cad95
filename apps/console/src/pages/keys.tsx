import { useEffect, useRef, useState } from 'preact/hooks';
import { type ApiError, api, asApiError } from '../api.ts';
import { Badge } from '../components/badge.tsx';
import { CopyButton } from '../components/copy-button.tsx';
import { Dialog, DialogActions } from '../components/dialog.tsx';
import { describedBy, Field } from '../components/field.tsx';
import { Pager, useCursorPages } from '../components/pager.tsx';
import { FormError, HiddenByScope, LoadedView } from '../components/states.tsx';
import { TableScroll } from '../components/table-scroll.tsx';
import { fieldErrorsOf } from '../field-errors.ts';
import { formatTime } from '../format.ts';
import { asGtin14 } from '../gtin.ts';
import { keyStatus } from '../key-status.ts';
import { Link } from '../router.tsx';
import { grantableScopes, holds } from '../scopes.ts';
import type { ApiKeyView, CreatedApiKey, Environment, KeyList, SessionView, VerificationKeyView } from '../types.ts';
import { useLoad } from '../use-load.ts';

const expiryChoices = [
  { value: '', label: 'Never' },
  { value: '1d', label: '1 day' },
  { value: '7d', label: '7 days' },
  { value: '30d', label: '30 days' },
  { value: '90d', label: '90 days' },
  { value: '1y', label: '1 year' },
] as const;

const graceChoices = [
  { seconds: 0, label: 'Now' },
  { seconds: 900, label: 'In 15 minutes' },
  { seconds: 3600, label: 'In 1 hour' },
  { seconds: 86_400, label: 'In 24 hours' },
] as const;

export function KeysPage({ session }: { session: SessionView }) {
  return (
    <>
      <p class="breadcrumb">Settings › API keys</p>
      <h1>API keys</h1>
      <p class="lead">
        Settings for the keys of <strong>{session.account.name}</strong> in the <strong>{session.session.environment}</strong>{' '}
        environment. Verifiers find the public keys of signed codes in the{' '}
        <a href="/.well-known/jwks.json">JSON Web Key Set (/.well-known/jwks.json)</a>.
      </p>
      <ApiKeys session={session} />
      <VerificationKeys type="public" title="Registered public keys" />
      <VerificationKeys type="signing" title="Service signing keys" />
    </>
  );
}

function ApiKeys({ session }: { session: SessionView }) {
  const pages = useCursorPages();
  const keys = useLoad(
    () => api.get<KeyList<ApiKeyView>>('/keys', { type: 'api', limit: 20, cursor: pages.cursor }),
    [pages.cursor],
  );
  const [secret, setSecret] = useState<{ key: CreatedApiKey; rotated: boolean } | undefined>();
  const [revoking, setRevoking] = useState<ApiKeyView | undefined>();
  const [rotating, setRotating] = useState<ApiKeyView | undefined>();
  const canWrite = holds(session, 'keys:write');
  const changed = (created?: CreatedApiKey, rotated = false) => {
    if (created) setSecret({ key: created, rotated });
    pages.reset();
    keys.reload();
  };

  return (
    <section aria-labelledby="api-keys-heading" class="panel">
      <h2 id="api-keys-heading">API keys</h2>
      {secret && <NewSecret created={secret.key} rotated={secret.rotated} onDone={() => setSecret(undefined)} />}
      <LoadedView
        loaded={keys}
        what="API keys"
        isEmpty={(data) => data.keys.length === 0}
        empty="No API keys in this environment."
      >
        {(data) => (
          <>
            <TableScroll labelledBy="api-keys-heading">
              <table class="keys-table">
                <thead>
                  <tr>
                    <th scope="col">Description</th>
                    <th scope="col">Status</th>
                    <th scope="col">Environment</th>
                    <th scope="col">Scopes</th>
                    <th scope="col">GTINs</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    <th scope="col">Expires</th>
                    {canWrite && <th scope="col">Actions</th>}
                  </tr>
                </thead>
                <tbody>
                  {data.keys.map((key) => {
                    const status = keyStatus(key);
                    const usable = status.label === 'Active' || status.label === 'Expires soon';
                    return (
                      <tr key={key.id} data-key-id={key.id}>
                        <th scope="row">
                          {key.name}
                          <span class="muted block code">{key.prefix}…</span>
                          {key.id === session.key.id && <span class="muted block">(you are signed in with it)</span>}
                          {holds(session, 'assets:read') && !session.key.restrictions && (
                            <Link class="block small" to={`/blocklist?createdBy=${encodeURIComponent(key.id)}&status=active`}>
                              Blocks it made<span class="visually-hidden"> ({key.name})</span>
                            </Link>
                          )}
                        </th>
                        <td>
                          <Badge tone={status.tone}>{status.label}</Badge>
                        </td>
                        <td>{key.environment}</td>
                        <td>{key.scopes.join(', ')}</td>
                        <td class="code">{key.restrictions ? key.restrictions.gtins.join(', ') : 'all'}</td>
                        <td>{formatTime(key.createdAt)}</td>
                        <td>{key.lastUsedAt === undefined ? 'not reported' : formatTime(key.lastUsedAt, 'never')}</td>
                        <td>{formatTime(key.expiresAt, 'never')}</td>
                        {canWrite && (
                          <td class="actions">
                            {usable && (
                              <>
                                <button type="button" class="button secondary small" onClick={() => setRotating(key)}>
                                  Rotate<span class="visually-hidden"> {key.name}</span>
                                </button>
                                <button type="button" class="button danger small" onClick={() => setRevoking(key)}>
                                  Revoke<span class="visually-hidden"> {key.name}</span>
                                </button>
                              </>
                            )}
                          </td>
                        )}
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </TableScroll>
            <Pager label="API keys" pages={pages} nextCursor={data.pagination.nextCursor} />
          </>
        )}
      </LoadedView>
      {canWrite ? (
        <CreateKey session={session} onCreated={(created) => changed(created)} />
      ) : (
        <HiddenByScope what="Creating, rotating and revoking keys" scope="keys:write" />
      )}
      {revoking && (
        <RevokeDialog
          apiKey={revoking}
          own={revoking.id === session.key.id}
          onClose={() => setRevoking(undefined)}
          onRevoked={() => {
            setRevoking(undefined);
            changed();
          }}
        />
      )}
      {rotating && (
        <RotateDialog
          apiKey={rotating}
          own={rotating.id === session.key.id}
          onClose={() => setRotating(undefined)}
          onRotated={(created) => {
            setRotating(undefined);
            changed(created, true);
          }}
        />
      )}
    </section>
  );
}

/** The new secret, shown this once. */
function NewSecret({ created, rotated, onDone }: { created: CreatedApiKey; rotated: boolean; onDone: () => void }) {
  // The focus goes to it, so a keyboard or screen-reader user finds the secret shown this once.
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [created.secret]);
  return (
    <section class="secret-panel" aria-labelledby="secret-heading">
      <h3 id="secret-heading" ref={heading} tabIndex={-1}>
        {rotated ? 'The new key of' : 'New key'}: {created.name}
      </h3>
      <p class="warning">
        <strong>Copy this secret now.</strong> It is shown only this once: Hallmark keeps only its hash and cannot show it again.
        Whoever has it can act with this key’s scopes.
      </p>
      {created.replaced && <p>The old key stops working at {formatTime(created.replaced.expiresAt)}.</p>}
      <label for="new-secret">Secret</label>
      <div class="secret-row">
        <input id="new-secret" class="secret" readOnly value={created.secret} onFocus={(event) => event.currentTarget.select()} />
        <CopyButton text={created.secret} label="Copy secret" />
      </div>
      <button type="button" class="button" onClick={onDone}>
        I have stored it
      </button>
    </section>
  );
}

function CreateKey({ session, onCreated }: { session: SessionView; onCreated: (created: CreatedApiKey) => void }) {
  const grantable = grantableScopes(session);
  const [name, setName] = useState('');
  const [environment, setEnvironment] = useState<Environment>(session.session.environment);
  const [scopes, setScopes] = useState<string[]>([]);
  const [expiresIn, setExpiresIn] = useState('90d');
  const [gtins, setGtins] = useState('');
  const [errors, setErrors] = useState<{ name?: string; scopes?: string; gtins?: string; form?: ApiError }>({});
  const [busy, setBusy] = useState(false);
  // The session's current environment (the switch in the header) decides, not the key's: a session
  // in live may make live and test keys; one in test only test keys (the API refuses a live one).
  const current = session.session.environment;
  const environments: Environment[] = current === 'live' ? ['live', 'test'] : ['test'];

  const toggle = (scope: string, on: boolean) =>
    setScopes((current) => (on ? [...current, scope] : current.filter((held) => held !== scope)));

  const submit = async (event: Event) => {
    event.preventDefault();
    const found: typeof errors = {};
    if (!name.trim()) found.name = 'Give the key a description, e.g. “Warehouse scanner”.';
    else if (name.trim().length > 100) found.name = 'At most 100 characters.';
    if (scopes.length === 0) found.scopes = 'Choose at least one scope.';
    // Separated by commas, spaces or lines; a GTIN-13 (or one a spreadsheet shortened) as its GTIN-14.
    const restrictedTo = [
      ...new Set(
        gtins
          .split(/[\s,;]+/)
          .filter(Boolean)
          .map(asGtin14),
      ),
    ];
    if (restrictedTo.some((gtin) => !/^\d{14}$/.test(gtin))) found.gtins = 'GTINs are 8 to 14 digits, separated by commas.';
    else if (restrictedTo.length > 100) found.gtins = 'At most 100 GTINs.';
    setErrors(found);
    if (found.name || found.scopes || found.gtins) return;
    setBusy(true);
    try {
      const created = await api.create<CreatedApiKey>('/keys', {
        name: name.trim(),
        scopes,
        environment,
        ...(expiresIn ? { expiresIn } : {}),
        ...(restrictedTo.length > 0 ? { restrictions: { gtins: restrictedTo } } : {}),
      });
      setName('');
      setScopes([]);
      setGtins('');
      onCreated(created);
    } catch (caught) {
      const failure = asApiError(caught);
      const field = String(failure.details.field ?? '');
      const gtinError = Object.entries(fieldErrorsOf(failure)).find(([name]) => name.startsWith('restrictions'));
      if (gtinError) setErrors({ gtins: gtinError[1] });
      else if (field === 'name') setErrors({ name: failure.message });
      else if (field === 'scopes' || failure.code === 'INSUFFICIENT_SCOPE') setErrors({ scopes: failure.message });
      else setErrors({ form: failure });
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="form create-key" onSubmit={submit} noValidate aria-labelledby="create-key-heading">
      <h3 id="create-key-heading">Create an API key</h3>
      <Field id="key-name" label="Description" hint="Shown in this list, e.g. who or what uses the key." error={errors.name}>
        <input
          {...describedBy('key-name', true, errors.name)}
          type="text"
          maxLength={100}
          value={name}
          onInput={(event) => setName(event.currentTarget.value)}
        />
      </Field>
      <fieldset class="field" aria-describedby="key-environment-hint">
        <legend>Environment</legend>
        <p class="hint" id="key-environment-hint">
          {current === 'live'
            ? 'A test key is listed under Test (the switch in the header), not here.'
            : session.environments.includes('live')
              ? 'This session is in the test environment, so it makes test keys; switch to Live in the header for a live key.'
              : 'A test key makes test keys only.'}
        </p>
        {environments.map((option) => (
          <label key={option} class="inline">
            <input
              type="radio"
              name="key-environment"
              value={option}
              checked={environment === option}
              onChange={() => setEnvironment(option)}
            />
            {option === 'live' ? 'Live' : 'Test'}
          </label>
        ))}
      </fieldset>
      <fieldset class={errors.scopes ? 'field field-invalid' : 'field'} aria-describedby="key-scopes-hint key-scopes-error">
        <legend>Scopes</legend>
        <p class="hint" id="key-scopes-hint">
          Only scopes your own key holds can be given.
        </p>
        <div class="checkbox-grid">
          {grantable.map((scope) => (
            <label key={scope} class="inline">
              <input
                type="checkbox"
                name="scope"
                value={scope}
                checked={scopes.includes(scope)}
                onChange={(event) => toggle(scope, event.currentTarget.checked)}
              />
              <span class="code">{scope === '*' ? '* (every scope)' : scope}</span>
            </label>
          ))}
        </div>
        {errors.scopes && (
          <p class="field-error" id="key-scopes-error" role="alert">
            {errors.scopes}
          </p>
        )}
      </fieldset>
      <Field
        id="key-gtins"
        label="Restrict to GTINs (optional)"
        hint="The key then acts on codes of these GTINs alone (generate, verify, block, list) and can do nothing else. Leave empty for every GTIN."
        error={errors.gtins}
      >
        <input
          {...describedBy('key-gtins', true, errors.gtins)}
          type="text"
          inputMode="numeric"
          placeholder="09506000134352, 04006381333931"
          value={gtins}
          onInput={(event) => setGtins(event.currentTarget.value)}
        />
      </Field>
      <Field id="key-expiry" label="Expires after" hint="The key stops working then; “Never” keeps it until revoked.">
        <select
          {...describedBy('key-expiry', true, undefined)}
          value={expiresIn}
          onChange={(event) => setExpiresIn(event.currentTarget.value)}
        >
          {expiryChoices.map((choice) => (
            <option key={choice.value} value={choice.value}>
              {choice.label}
            </option>
          ))}
        </select>
      </Field>
      <FormError error={errors.form} />
      <button type="submit" class="button" disabled={busy}>
        {busy ? 'Creating…' : 'Create key'}
      </button>
    </form>
  );
}

function RevokeDialog({
  apiKey,
  own,
  onClose,
  onRevoked,
}: {
  apiKey: ApiKeyView;
  /** The key this console is signed in with. */
  own: boolean;
  onClose: () => void;
  onRevoked: () => void;
}) {
  const [error, setError] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);
  const revoke = async () => {
    setBusy(true);
    try {
      await api.post(`/keys/${encodeURIComponent(apiKey.id)}/revoke`);
      onRevoked();
    } catch (caught) {
      setError(asApiError(caught));
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Revoke ${apiKey.name}?`} onClose={onClose}>
      <p>
        Every request with this key is refused from now on, on every gateway, and its console sessions end. This cannot be undone.
      </p>
      {own && (
        <p class="warning">
          <strong>You are signed in with this key:</strong> this console signs out at once, and you need another key to sign in
          again.
        </p>
      )}
      <DialogActions
        error={error}
        onCancel={onClose}
        onConfirm={revoke}
        busy={busy}
        label="Revoke key"
        busyLabel="Revoking…"
        danger
      />
    </Dialog>
  );
}

function RotateDialog({
  apiKey,
  own,
  onClose,
  onRotated,
}: {
  apiKey: ApiKeyView;
  /** The key this console is signed in with: it may not end at once (the API refuses it too). */
  own: boolean;
  onClose: () => void;
  onRotated: (created: CreatedApiKey) => void;
}) {
  const [grace, setGrace] = useState(3600);
  const [error, setError] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);
  const rotate = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      onRotated(await api.create<CreatedApiKey>(`/keys/${encodeURIComponent(apiKey.id)}/rotate`, { graceSeconds: grace }));
    } catch (caught) {
      setError(asApiError(caught));
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Rotate ${apiKey.name}`} onClose={onClose}>
      <form onSubmit={rotate}>
        <p>A new key with the same description, environment, scopes and lifetime is made; its secret is shown once.</p>
        {own && (
          <p class="hint" id="rotate-own-hint">
            You are signed in with this key, so it cannot stop working at once: this page would sign out before you could copy the
            new secret. Sign in with the new key before the old one stops.
          </p>
        )}
        <fieldset class="field">
          <legend>The old key stops working</legend>
          {graceChoices.map((choice) => (
            <label key={choice.seconds} class="block-label">
              <input
                type="radio"
                name="grace"
                value={choice.seconds}
                checked={grace === choice.seconds}
                disabled={own && choice.seconds === 0}
                {...(own && choice.seconds === 0 ? { 'aria-describedby': 'rotate-own-hint' } : {})}
                onChange={() => setGrace(choice.seconds)}
              />
              {choice.label}
            </label>
          ))}
        </fieldset>
        <DialogActions error={error} onCancel={onClose} busy={busy} label="Rotate key" busyLabel="Rotating…" />
      </form>
    </Dialog>
  );
}

function VerificationKeys({ type, title }: { type: 'public' | 'signing'; title: string }) {
  const pages = useCursorPages();
  const keys = useLoad(
    () => api.get<KeyList<VerificationKeyView>>('/keys', { type, limit: 20, cursor: pages.cursor }),
    [pages.cursor],
  );
  const id = `${type}-keys-heading`;
  return (
    <section aria-labelledby={id} class="panel">
      <h2 id={id}>{title}</h2>
      <p class="hint">
        {type === 'public'
          ? 'Ed25519 keys your systems sign codes with themselves (registered with POST /api/v1/keys).'
          : 'The keys Hallmark signs your codes with. Retired keys still verify the codes they signed.'}{' '}
        All are published in the <a href="/.well-known/jwks.json">key set</a>.
      </p>
      <LoadedView
        loaded={keys}
        what={title.toLowerCase()}
        isEmpty={(data) => data.keys.length === 0}
        empty={`No ${title.toLowerCase()}.`}
      >
        {(data) => (
          <>
            <TableScroll labelledBy={id}>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Key id</th>
                    <th scope="col">Environment</th>
                    <th scope="col">Created</th>
                    <th scope="col">Status</th>
                  </tr>
                </thead>
                <tbody>
                  {data.keys.map((key) => (
                    <tr key={key.id}>
                      <th scope="row">{key.name ?? '—'}</th>
                      <td class="code break">{key.id}</td>
                      <td>{key.environment}</td>
                      <td>{formatTime(key.createdAt)}</td>
                      <td>
                        <Badge tone={key.status === 'active' ? 'good' : key.status === 'retired' ? 'neutral' : 'bad'}>
                          {key.status === 'active' ? 'Active' : key.status === 'retired' ? 'Retired' : 'Revoked'}
                        </Badge>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
            <Pager label={title} pages={pages} nextCursor={data.pagination.nextCursor} />
          </>
        )}
      </LoadedView>
    </section>
  );
}
