import { useState } from 'preact/hooks';
import { type ApiError, api, asApiError } from '../api.ts';
import { describedBy, Field } from '../components/field.tsx';
import { FormError } from '../components/states.tsx';
import { fieldErrorsOf } from '../field-errors.ts';
import { asGtin14 } from '../gtin.ts';
import { Link } from '../router.tsx';
import { holds } from '../scopes.ts';
import type { GeneratedCode, GtinClaimView, SessionView } from '../types.ts';
import { useLoad } from '../use-load.ts';

interface Form {
  gtin: string;
  serialNumber: string;
  batchNumber: string;
  expiryDate: string;
  name: string;
}

const empty: Form = { gtin: '', serialNumber: '', batchNumber: '', expiryDate: '', name: '' };

/** What the account signs for, in words for the GTIN field's hint: "" while unknown, or when not listed. */
function signsFor(claims: readonly GtinClaimView[] | undefined): string {
  if (!claims) return '';
  const active = claims.filter((claim) => claim.status === 'active');
  if (active.length === 0) return ' Your account has no GTIN or company prefix of its own yet: the operator grants them.';
  const named = active.map((claim) => (claim.kind === 'gtin' ? claim.value : `any GTIN of the company prefix ${claim.value}`));
  return ` Your account signs for ${named.join(', ')}.`;
}

/** One code: POST /code/generate, its errors shown at their fields. */
export function GenerateCodePage({ session }: { session: SessionView }) {
  const [form, setForm] = useState<Form>(empty);
  // The account's GTINs and prefixes, for the GTIN field's hint (a key without assets:read goes
  // without; the operator, who signs for every GTIN nobody owns, is not told a list).
  const canList = holds(session, 'assets:read') && !session.key.isOperator;
  const claims = useLoad<{ claims?: GtinClaimView[] }>(
    () =>
      canList
        ? api.get<{ claims: GtinClaimView[] }>('/gtins', { status: 'active', limit: 100 })
        : Promise.resolve({ claims: undefined }),
    [canList],
  );
  const gtinHint = signsFor(claims.data?.claims);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<ApiError | undefined>();
  const [created, setCreated] = useState<GeneratedCode | undefined>();
  const [busy, setBusy] = useState(false);
  const set = (name: keyof Form) => (event: { currentTarget: HTMLInputElement }) =>
    setForm({ ...form, [name]: event.currentTarget.value });

  const submit = async (event: Event) => {
    event.preventDefault();
    const found: Record<string, string> = {};
    if (!/^\d{8,14}$/.test(form.gtin.trim())) found.gtin = 'Enter the GTIN (8 to 14 digits).';
    if (!form.serialNumber.trim()) found.serialNumber = 'Enter a serial number.';
    setErrors(found);
    setFailure(undefined);
    // The last code's notice goes: it would stand beside this submission's refusal as if both were now.
    setCreated(undefined);
    if (Object.keys(found).length > 0) return;
    setBusy(true);
    try {
      const code = await api.create<GeneratedCode>(
        '/code/generate',
        {
          // The API takes a GTIN-14: a GTIN-8, -12 or -13 is the same number with leading zeros.
          gtin: asGtin14(form.gtin.trim()),
          serialNumber: form.serialNumber.trim(),
          ...(form.batchNumber.trim() ? { batchNumber: form.batchNumber.trim() } : {}),
          ...(form.expiryDate ? { expiryDate: form.expiryDate } : {}),
          ...(form.name.trim() ? { metadata: { name: form.name.trim() } } : {}),
        },
        // A generated code's id follows from the key: a retry after a 5xx answers the same code.
        { serverErrors: true },
      );
      setCreated(code);
      setForm({ ...empty, gtin: form.gtin, batchNumber: form.batchNumber, expiryDate: form.expiryDate, name: form.name });
    } catch (caught) {
      const error = asApiError(caught);
      const byField = fieldErrorsOf(error);
      setErrors(byField);
      if (Object.keys(byField).length === 0) setFailure(error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <p class="breadcrumb">
        <Link to="/codes">Codes</Link> › generate a code
      </p>
      <h1>Generate a code</h1>
      {created && (
        <div class="notice success" role="status">
          <p>
            Code generated:{' '}
            <a href={created.url} class="code break">
              {created.url}
            </a>
          </p>
          <p>
            <Link to={`/codes/${encodeURIComponent(created.assetId)}`}>Open the code’s page</Link> (QR code downloads, scans).
          </p>
        </div>
      )}
      <form class="form" onSubmit={submit} noValidate>
        <Field
          id="code-gtin"
          label="GTIN"
          hint={`8 to 14 digits with a valid check digit (a shorter GTIN is sent as its GTIN-14, with leading zeros).${gtinHint}`}
          error={errors.gtin}
        >
          <input {...describedBy('code-gtin', true, errors.gtin)} inputMode="numeric" value={form.gtin} onInput={set('gtin')} />
        </Field>
        <Field id="code-serial" label="Serial number" hint="1 to 20 characters, unique for the GTIN." error={errors.serialNumber}>
          <input
            {...describedBy('code-serial', true, errors.serialNumber)}
            value={form.serialNumber}
            onInput={set('serialNumber')}
          />
        </Field>
        <Field id="code-batch" label="Batch (optional)" error={errors.batchNumber}>
          <input
            {...describedBy('code-batch', false, errors.batchNumber)}
            value={form.batchNumber}
            onInput={set('batchNumber')}
          />
        </Field>
        <Field id="code-expiry" label="Expiry date (optional)" error={errors.expiryDate}>
          <input
            {...describedBy('code-expiry', false, errors.expiryDate)}
            type="date"
            value={form.expiryDate}
            onInput={set('expiryDate')}
          />
        </Field>
        <Field
          id="code-name"
          label="Product name (optional)"
          hint="Stored as the code’s metadata “name”."
          error={errors.metadata}
        >
          <input {...describedBy('code-name', true, errors.metadata)} value={form.name} onInput={set('name')} />
        </Field>
        <FormError error={failure} />
        <button type="submit" class="button" disabled={busy}>
          {busy ? 'Generating…' : 'Generate code'}
        </button>
      </form>
    </>
  );
}
