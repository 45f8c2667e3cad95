import { useState } from 'preact/hooks';
import { type ApiError, asApiError } from '../api.ts';
import { describedBy, Field } from '../components/field.tsx';
import { FormError } from '../components/states.tsx';
import { signIn } from '../session.ts';
import type { SessionView } from '../types.ts';

/** Sign-in with an API key: sent once to POST /sessions, then forgotten (the session cookie does the rest). */
export function SignInPage({ onSignedIn, notice }: { onSignedIn: (session: SessionView) => void; notice?: string }) {
  return (
    <div class="sign-in-layout">
      <header class="sign-in-header">
        <p class="brand">Hallmark</p>
      </header>
      <main id="main" class="sign-in">
        <h1>Sign in to the console</h1>
        {notice && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        <SignInForm onSignedIn={onSignedIn} />
        <p class="hint">
          Signed-in sessions end after 30 minutes without use, after 12 hours in any case, when you sign out, and as soon as the
          key is revoked.
        </p>
      </main>
    </div>
  );
}

/** The API key field and its Sign in button: the sign-in page's, and the dialog's when a session ends on a page. */
export function SignInForm({ onSignedIn }: { onSignedIn: (session: SessionView) => void }) {
  const [apiKey, setApiKey] = useState('');
  const [error, setError] = useState<ApiError | undefined>();
  const [fieldError, setFieldError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    if (!apiKey.trim()) {
      setFieldError('Enter an API key (it starts with svc_live_ or svc_test_).');
      return;
    }
    setFieldError(undefined);
    setBusy(true);
    try {
      const session = await signIn(apiKey.trim());
      setApiKey('');
      onSignedIn(session);
    } catch (caught) {
      const failure = asApiError(caught);
      if (failure.status === 401) setFieldError(failure.message);
      else setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} noValidate>
      <Field
        id="api-key"
        label="API key"
        hint="The operator’s key or a key of your account. It is sent once to start a session and never stored in the browser."
        error={fieldError}
      >
        <input
          {...describedBy('api-key', true, fieldError)}
          name="apiKey"
          type="password"
          autocomplete="off"
          spellcheck={false}
          value={apiKey}
          onInput={(event) => setApiKey(event.currentTarget.value)}
        />
      </Field>
      <FormError error={error} />
      <button type="submit" class="button" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}
