import { useEffect, useRef, useState } from 'preact/hooks';
import { type ApiError, api, asApiError } from '../api.ts';
import { Badge, type BadgeTone } from '../components/badge.tsx';
import { CopyButton } from '../components/copy-button.tsx';
import { Dialog, DialogActions } from '../components/dialog.tsx';
import { describedBy, Field } from '../components/field.tsx';
import { Pager, useCursorPages } from '../components/pager.tsx';
import { FormError, HiddenByScope, LoadedView } from '../components/states.tsx';
import { TableScroll } from '../components/table-scroll.tsx';
import { formatTime, isolated } from '../format.ts';
import { holds } from '../scopes.ts';
import type { CreatedWebhookEndpoint, Pagination, SessionView, WebhookEndpointView, WebhookMessageView } from '../types.ts';
import { useLoad } from '../use-load.ts';

// Settings → Webhooks: the account's endpoints in this environment (/webhooks/endpoints; docs/WEBHOOKS.md).
// Create one (its signing secret shown once), send a test, see its messages and send one again,
// rotate the secret (say, after a leak), disable, enable and delete.

/** The event catalogue (packages/contracts webhookEventTypes; a unit test keeps the two the same), in words. */
export const webhookEventChoices: ReadonlyArray<{ type: string; words: string }> = [
  { type: 'scan.suspicious', words: 'A scan of one of your codes was suspicious' },
  { type: 'scan.counterfeit', words: 'A scan of a link of your GTIN was counterfeit' },
  { type: 'code.reported', words: 'Someone reported one of your codes' },
  { type: 'code.blocked', words: 'A code was blocked (blocklist, or a confirmed report)' },
  { type: 'code.unblocked', words: 'A block was removed or lifted' },
  { type: 'transfer.completed', words: 'An auction object changed hands' },
  { type: 'transfer.locked', words: 'A transfer was locked after wrong transfer codes' },
  { type: 'transfer.cancelled', words: 'A pending transfer was cancelled' },
  { type: 'quota.threshold', words: 'A daily quota reached 80% or 100%' },
  { type: 'key.expiring', words: 'An API key expires within 7 days, or 1 day' },
  { type: 'endpoint.disabled', words: 'Another of your endpoints was disabled' },
  { type: 'test', words: 'A test message, sent on demand' },
];

function endpointStatus(endpoint: WebhookEndpointView): { tone: BadgeTone; label: string } {
  if (endpoint.status === 'disabled') {
    const why =
      endpoint.disabledReason === 'gone' ? ' (answered 410)' : endpoint.disabledReason === 'failing' ? ' (failing)' : '';
    return { tone: 'bad', label: `Disabled${why}` };
  }
  if (endpoint.failingSince) return { tone: 'warning', label: 'Failing' };
  return { tone: 'good', label: 'Enabled' };
}

const messageTone: Readonly<Record<WebhookMessageView['status'], BadgeTone>> = {
  pending: 'warning',
  delivered: 'good',
  failed: 'bad',
};

export function WebhooksPage({ session }: { session: SessionView }) {
  const pages = useCursorPages();
  const endpoints = useLoad(
    () =>
      api.get<{ endpoints: WebhookEndpointView[]; pagination: Pagination }>('/webhooks/endpoints', {
        limit: 20,
        cursor: pages.cursor,
      }),
    [pages.cursor],
  );
  const canWrite = holds(session, 'keys:write');
  const [secret, setSecret] = useState<ShownSecret | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [problem, setProblem] = useState<ApiError | undefined>();
  /** The endpoint whose messages are open, and how many times they were asked for (a new test shows at once). */
  const [watching, setWatching] = useState<{ endpoint: WebhookEndpointView; round: number } | undefined>();
  const [deleting, setDeleting] = useState<WebhookEndpointView | undefined>();
  const [rotating, setRotating] = useState<WebhookEndpointView | undefined>();
  const [disabling, setDisabling] = useState<WebhookEndpointView | undefined>();
  const [busy, setBusy] = useState(false);
  // What an action said takes the focus (the button pressed may be gone with the list's reload).
  const said = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (notice || problem) said.current?.focus();
  }, [notice, problem]);

  /** Runs one change of an endpoint, says how it went, and lists the endpoints again when they changed. */
  const change = async (action: () => Promise<string | undefined>, options: { reload?: boolean } = {}) => {
    setBusy(true);
    setProblem(undefined);
    setNotice(undefined);
    try {
      setNotice(await action());
      if (options.reload !== false) endpoints.reload();
    } catch (caught) {
      setProblem(asApiError(caught));
    } finally {
      setBusy(false);
    }
  };
  const path = (endpoint: WebhookEndpointView, rest = '') => `/webhooks/endpoints/${encodeURIComponent(endpoint.id)}${rest}`;
  const watch = (endpoint: WebhookEndpointView) =>
    setWatching((current) => ({ endpoint, round: current?.endpoint.id === endpoint.id ? current.round + 1 : 0 }));

  return (
    <>
      <p class="breadcrumb">Settings › Webhooks</p>
      <h1>Webhooks</h1>
      <p class="lead">
        Hallmark calls your endpoints when something happens to <strong>{session.account.name}</strong>’s codes and objects in the{' '}
        <strong>{session.session.environment}</strong> environment: suspicious and counterfeit scans, reports, blocks, transfers,
        quotas. Each message is signed (Standard Webhooks) with the endpoint’s secret; check the signature before trusting it.
        Private and loopback addresses are refused at delivery.
      </p>
      <div ref={said} tabIndex={-1} class="said">
        {notice && (
          <p class="notice success" role="status">
            {notice}
          </p>
        )}
        <FormError error={problem} />
      </div>
      <section aria-labelledby="endpoints-heading" class="panel">
        <h2 id="endpoints-heading">Endpoints</h2>
        {secret && <EndpointSecret shown={secret} onDone={() => setSecret(undefined)} />}
        <LoadedView
          loaded={endpoints}
          what="endpoints"
          isEmpty={(data) => data.endpoints.length === 0}
          empty="No endpoints in this environment."
        >
          {(data) => (
            <>
              <TableScroll labelledBy="endpoints-heading">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">URL</th>
                      <th scope="col">Events</th>
                      <th scope="col">Status</th>
                      <th scope="col">Created</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.endpoints.map((endpoint) => {
                      const status = endpointStatus(endpoint);
                      // Two endpoints may share a URL: the id tells their buttons apart.
                      const which = ` ${endpoint.url} (${endpoint.id})`;
                      return (
                        <tr key={endpoint.id} data-endpoint={endpoint.id}>
                          <th scope="row">
                            <span class="code break">{endpoint.url}</span>
                            {endpoint.description && <span class="muted block">{endpoint.description}</span>}
                          </th>
                          <td>{endpoint.eventTypes.join(', ')}</td>
                          <td>
                            <Badge tone={status.tone}>{status.label}</Badge>
                            {endpoint.failingSince && (
                              <span class="muted block">failing since {formatTime(endpoint.failingSince)}</span>
                            )}
                          </td>
                          <td>
                            {formatTime(endpoint.createdAt)}
                            {/* Which key made it, and changed it last: after a leak, what to delete (docs/WEBHOOKS.md). */}
                            {endpoint.createdBy && (
                              <span class="muted block">
                                by key <span class="code break">{endpoint.createdBy}</span>
                              </span>
                            )}
                            {endpoint.changedBy && (
                              <span class="muted block">
                                changed by key <span class="code break">{endpoint.changedBy}</span>
                              </span>
                            )}
                          </td>
                          <td class="actions">
                            <button type="button" class="button secondary small" onClick={() => watch(endpoint)}>
                              Messages<span class="visually-hidden"> of{which}</span>
                            </button>
                            {canWrite && (
                              <>
                                {/* A disabled endpoint takes no test (409): enable it first. */}
                                {endpoint.status === 'enabled' && (
                                  <button
                                    type="button"
                                    class="button secondary small"
                                    disabled={busy}
                                    onClick={() =>
                                      change(
                                        async () => {
                                          const queued = await api.post<{ id: string }>(path(endpoint, '/test'));
                                          watch(endpoint);
                                          return `A test message (${queued.id}) is on its way to ${isolated(endpoint.url)}.`;
                                        },
                                        { reload: false },
                                      )
                                    }
                                  >
                                    Send test<span class="visually-hidden"> to{which}</span>
                                  </button>
                                )}
                                <button
                                  type="button"
                                  class="button secondary small"
                                  disabled={busy}
                                  onClick={() => setRotating(endpoint)}
                                >
                                  Rotate secret<span class="visually-hidden"> of{which}</span>
                                </button>
                                {endpoint.status === 'enabled' ? (
                                  <button
                                    type="button"
                                    class="button secondary small"
                                    disabled={busy}
                                    onClick={() => setDisabling(endpoint)}
                                  >
                                    Disable<span class="visually-hidden">{which}</span>
                                  </button>
                                ) : (
                                  <button
                                    type="button"
                                    class="button secondary small"
                                    disabled={busy}
                                    onClick={() =>
                                      change(async () => {
                                        await api.patch(path(endpoint), { enabled: true });
                                        return `${isolated(endpoint.url)} is enabled again.`;
                                      })
                                    }
                                  >
                                    Enable<span class="visually-hidden">{which}</span>
                                  </button>
                                )}
                                <button type="button" class="button danger small" onClick={() => setDeleting(endpoint)}>
                                  Delete<span class="visually-hidden">{which}</span>
                                </button>
                              </>
                            )}
                          </td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </TableScroll>
              <Pager label="Endpoints" pages={pages} nextCursor={data.pagination.nextCursor} />
            </>
          )}
        </LoadedView>
        {canWrite ? (
          <CreateEndpoint
            onCreated={(created) => {
              setNotice(undefined);
              setProblem(undefined);
              setSecret({ endpointId: created.id, url: created.url, secret: created.secret });
              pages.reset();
              endpoints.reload();
            }}
          />
        ) : (
          <HiddenByScope what="Creating, testing and changing endpoints" scope="keys:write" />
        )}
      </section>
      {watching && (
        <EndpointMessages
          key={`${watching.endpoint.id}-${watching.round}`}
          endpoint={watching.endpoint}
          canWrite={canWrite}
          onClose={() => setWatching(undefined)}
          messagesPath={path(watching.endpoint, '/messages')}
        />
      )}
      {rotating && (
        <RotateDialog
          endpoint={rotating}
          onClose={() => setRotating(undefined)}
          onRotated={(rotated) => {
            setRotating(undefined);
            setNotice(undefined);
            setProblem(undefined);
            setSecret({
              endpointId: rotating.id,
              url: rotating.url,
              secret: rotated.secret,
              previousExpiresAt: rotated.previousSecretExpiresAt,
            });
            endpoints.reload();
          }}
        />
      )}
      {disabling && (
        <DisableDialog
          endpoint={disabling}
          onClose={() => setDisabling(undefined)}
          onDisabled={() => {
            setDisabling(undefined);
            setProblem(undefined);
            setNotice(
              `${isolated(disabling.url)} is disabled: nothing is recorded for it while it is; messages already waiting go out when it is enabled again.`,
            );
            endpoints.reload();
          }}
        />
      )}
      {deleting && (
        <DeleteDialog
          endpoint={deleting}
          onClose={() => setDeleting(undefined)}
          onDeleted={() => {
            setDeleting(undefined);
            setProblem(undefined);
            if (watching?.endpoint.id === deleting.id) setWatching(undefined);
            if (secret?.endpointId === deleting.id) setSecret(undefined);
            setNotice(`${isolated(deleting.url)} is deleted: nothing more is sent to it.`);
            pages.reset();
            endpoints.reload();
          }}
        />
      )}
    </>
  );
}

interface ShownSecret {
  endpointId: string;
  url: string;
  secret: string;
  previousExpiresAt?: string;
}

/**
 * Rotating a secret, confirmed first: the new one is shown once, and the one before keeps signing
 * for the grace period. A second rotation within it ends the first secret at once, so it warns.
 */
function RotateDialog({
  endpoint,
  onClose,
  onRotated,
}: {
  endpoint: WebhookEndpointView;
  onClose: () => void;
  onRotated: (rotated: { secret: string; previousSecretExpiresAt: string }) => void;
}) {
  const [error, setError] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);
  const inGrace = endpoint.previousSecretExpiresAt !== null && new Date(endpoint.previousSecretExpiresAt) > new Date();
  const rotate = async () => {
    setBusy(true);
    try {
      onRotated(
        await api.post<{ secret: string; previousSecretExpiresAt: string }>(
          `/webhooks/endpoints/${encodeURIComponent(endpoint.id)}/rotate-secret`,
        ),
      );
    } catch (caught) {
      setError(asApiError(caught));
      setBusy(false);
    }
  };
  return (
    <Dialog title="Rotate this endpoint’s secret?" onClose={onClose}>
      <p>
        <span class="code break">{endpoint.url}</span> gets a new signing secret, shown once. Messages carry a signature under the
        current secret too until its grace period ends, so the receiver can switch without losing any.
      </p>
      {inGrace && (
        <p class="warning" role="note">
          <strong>It was rotated recently:</strong> the secret before that one stops signing now, not at{' '}
          {formatTime(endpoint.previousSecretExpiresAt)}. A receiver that has not switched to the current secret yet will refuse
          messages.
        </p>
      )}
      <DialogActions
        error={error}
        onCancel={onClose}
        onConfirm={rotate}
        busy={busy}
        label="Rotate secret"
        busyLabel="Rotating…"
        danger
      />
    </Dialog>
  );
}

/**
 * Disabling an endpoint, confirmed first: the events of the time it is disabled are never recorded
 * for it, so a slip of the finger loses them (before, the button acted at once).
 */
function DisableDialog({
  endpoint,
  onClose,
  onDisabled,
}: {
  endpoint: WebhookEndpointView;
  onClose: () => void;
  onDisabled: () => void;
}) {
  const [error, setError] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);
  const disable = async () => {
    setBusy(true);
    try {
      await api.post(`/webhooks/endpoints/${encodeURIComponent(endpoint.id)}/disable`);
      onDisabled();
    } catch (caught) {
      setError(asApiError(caught));
      setBusy(false);
    }
  };
  return (
    <Dialog title="Disable this endpoint?" onClose={onClose}>
      <p>
        Nothing is recorded for <span class="code break">{endpoint.url}</span> while it is disabled: the events of that time never
        reach it, even once it is enabled again. Messages already waiting go out when it is.
      </p>
      <DialogActions
        error={error}
        onCancel={onClose}
        onConfirm={disable}
        busy={busy}
        label="Disable endpoint"
        busyLabel="Disabling…"
        danger
      />
    </Dialog>
  );
}

/** The signing secret, shown this once (after creating an endpoint or rotating its secret). */
function EndpointSecret({ shown, onDone }: { shown: ShownSecret; onDone: () => void }) {
  // Shown where the list is: the focus goes to it, so a keyboard or screen-reader user finds it.
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [shown.secret]);
  return (
    <section class="secret-panel" aria-labelledby="webhook-secret-heading">
      <h3 id="webhook-secret-heading" ref={heading} tabIndex={-1}>
        Signing secret of <bdi>{shown.url}</bdi>
      </h3>
      <p class="warning">
        <strong>Copy this secret now.</strong> It is shown only this once. Whoever has it can sign messages your endpoint would
        take as Hallmark’s.
      </p>
      {shown.previousExpiresAt && (
        <p>
          Messages also carry a signature under the previous secret until {formatTime(shown.previousExpiresAt)}, so your endpoint
          can switch without losing any.
        </p>
      )}
      <label for="webhook-secret">Secret</label>
      <div class="secret-row">
        <input
          id="webhook-secret"
          class="secret"
          readOnly
          value={shown.secret}
          onFocus={(event) => event.currentTarget.select()}
        />
        <CopyButton text={shown.secret} label="Copy secret" />
      </div>
      <button type="button" class="button" onClick={onDone}>
        I have stored it
      </button>
    </section>
  );
}

function CreateEndpoint({ onCreated }: { onCreated: (created: CreatedWebhookEndpoint) => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState<string[]>([]);
  const [errors, setErrors] = useState<{ url?: string; types?: string; form?: ApiError }>({});
  const [busy, setBusy] = useState(false);
  const toggle = (type: string, on: boolean) =>
    setTypes((current) => (on ? [...current, type] : current.filter((held) => held !== type)));

  const submit = async (event: Event) => {
    event.preventDefault();
    const found: typeof errors = {};
    if (!/^https?:\/\/\S+$/i.test(url.trim()))
      found.url = 'An http:// or https:// address, e.g. https://hooks.example.com/hallmark.';
    if (types.length === 0) found.types = 'Choose at least one event.';
    setErrors(found);
    if (found.url || found.types) return;
    setBusy(true);
    try {
      const created = await api.create<CreatedWebhookEndpoint>('/webhooks/endpoints', {
        url: url.trim(),
        eventTypes: types,
        ...(description.trim() ? { description: description.trim() } : {}),
      });
      setUrl('');
      setDescription('');
      setTypes([]);
      onCreated(created);
    } catch (caught) {
      const failure = asApiError(caught);
      // The URL refused: by its schema (details.fields) or by its checks (details.field, e.g. credentials in it).
      const fields = (failure.details.fields as Array<{ field?: string; message?: string }> | undefined) ?? [];
      const onUrl = fields.find((each) => each.field === 'url');
      if (onUrl) setErrors({ url: onUrl.message ?? failure.message });
      else if (failure.details.field === 'url') setErrors({ url: failure.message });
      else setErrors({ form: failure });
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="form create-key" onSubmit={submit} noValidate aria-labelledby="create-endpoint-heading">
      <h3 id="create-endpoint-heading">Add an endpoint</h3>
      <Field id="endpoint-url" label="URL" hint="Where Hallmark sends the messages (POST, JSON)." error={errors.url}>
        <input
          {...describedBy('endpoint-url', true, errors.url)}
          type="url"
          maxLength={2048}
          value={url}
          onInput={(event) => setUrl(event.currentTarget.value)}
        />
      </Field>
      <Field id="endpoint-description" label="Description (optional)" hint="Shown in this list, e.g. who receives it.">
        <input
          {...describedBy('endpoint-description', true, undefined)}
          maxLength={500}
          value={description}
          onInput={(event) => setDescription(event.currentTarget.value)}
        />
      </Field>
      <fieldset
        class={errors.types ? 'field field-invalid' : 'field'}
        aria-describedby={errors.types ? 'endpoint-types-error' : undefined}
      >
        <legend>Events</legend>
        <div class="checkbox-grid event-choices">
          {webhookEventChoices.map((choice) => (
            <label key={choice.type} class="inline">
              <input
                type="checkbox"
                name="event-type"
                value={choice.type}
                checked={types.includes(choice.type)}
                onChange={(event) => toggle(choice.type, event.currentTarget.checked)}
              />
              <span>
                <span class="code">{choice.type}</span> <span class="muted">{choice.words}</span>
              </span>
            </label>
          ))}
        </div>
        {errors.types && (
          <p class="field-error" id="endpoint-types-error" role="alert">
            {errors.types}
          </p>
        )}
      </fieldset>
      <FormError error={errors.form} />
      <button type="submit" class="button" disabled={busy}>
        {busy ? 'Adding…' : 'Add endpoint'}
      </button>
    </form>
  );
}

/** One endpoint's messages, newest first, with each one's attempts and a way to send it again. */
function EndpointMessages({
  endpoint,
  canWrite,
  messagesPath,
  onClose,
}: {
  endpoint: WebhookEndpointView;
  canWrite: boolean;
  messagesPath: string;
  onClose: () => void;
}) {
  const pages = useCursorPages();
  const messages = useLoad(
    () => api.get<{ messages: WebhookMessageView[]; pagination: Pagination }>(messagesPath, { limit: 20, cursor: pages.cursor }),
    [messagesPath, pages.cursor],
  );
  const [said, setSaid] = useState<string | undefined>();
  const [problem, setProblem] = useState<ApiError | undefined>();
  const [replaying, setReplaying] = useState(false);
  const replay = async (message: WebhookMessageView) => {
    setSaid(undefined);
    setProblem(undefined);
    setReplaying(true);
    try {
      await api.post(`${messagesPath}/${encodeURIComponent(message.id)}/replay`);
      setSaid(`${message.eventType} message ${message.id} is sent again (same webhook-id).`);
      messages.reload();
    } catch (caught) {
      setProblem(asApiError(caught));
    } finally {
      setReplaying(false);
    }
  };
  // Opened below the list: the focus goes to it.
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <section aria-labelledby="messages-heading" class="panel">
      <h2 id="messages-heading" ref={heading} tabIndex={-1}>
        Messages to <span class="code break">{endpoint.url}</span>
      </h2>
      <p class="actions-row">
        <button type="button" class="button secondary small" onClick={messages.reload}>
          Refresh
        </button>
        <button type="button" class="button secondary small" onClick={onClose}>
          Close
        </button>
      </p>
      {said && (
        <p class="notice success" role="status">
          {said}
        </p>
      )}
      <FormError error={problem} />
      <LoadedView
        loaded={messages}
        what="messages"
        isEmpty={(data) => data.messages.length === 0}
        empty="No messages to this endpoint yet."
      >
        {(data) => (
          <>
            <TableScroll labelledBy="messages-heading">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Event</th>
                    <th scope="col">Status</th>
                    <th scope="col">Attempts</th>
                    <th scope="col">Last answer</th>
                    <th scope="col">Created</th>
                    <th scope="col">Delivered</th>
                    {canWrite && <th scope="col">Actions</th>}
                  </tr>
                </thead>
                <tbody>
                  {data.messages.map((message) => (
                    <tr key={message.id} data-message={message.id}>
                      <th scope="row">
                        <span class="code">{message.eventType}</span>
                        <span class="muted block code">{message.id}</span>
                      </th>
                      <td>
                        <Badge tone={messageTone[message.status]}>{message.status}</Badge>
                        {message.status === 'pending' && message.nextAttemptAt && (
                          <span class="muted block">next try {formatTime(message.nextAttemptAt)}</span>
                        )}
                      </td>
                      <td>{message.attempts}</td>
                      <td>{message.lastResponseCode ?? '—'}</td>
                      <td>{formatTime(message.createdAt)}</td>
                      <td>{formatTime(message.deliveredAt)}</td>
                      {canWrite && (
                        <td>
                          <button
                            type="button"
                            class="button secondary small"
                            disabled={replaying}
                            onClick={() => replay(message)}
                          >
                            Send again<span class="visually-hidden"> {message.id}</span>
                          </button>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
            <Pager label="Messages" pages={pages} nextCursor={data.pagination.nextCursor} />
          </>
        )}
      </LoadedView>
    </section>
  );
}

function DeleteDialog({
  endpoint,
  onClose,
  onDeleted,
}: {
  endpoint: WebhookEndpointView;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const [error, setError] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);
  const remove = async () => {
    setBusy(true);
    try {
      await api.delete(`/webhooks/endpoints/${encodeURIComponent(endpoint.id)}`);
      onDeleted();
    } catch (caught) {
      setError(asApiError(caught));
      setBusy(false);
    }
  };
  return (
    <Dialog title="Delete this endpoint?" onClose={onClose}>
      <p>
        <span class="code break">{endpoint.url}</span> gets nothing more, and its messages and their attempts are deleted with it.
        This cannot be undone.
      </p>
      <DialogActions
        error={error}
        onCancel={onClose}
        onConfirm={remove}
        busy={busy}
        label="Delete endpoint"
        busyLabel="Deleting…"
        danger
      />
    </Dialog>
  );
}
