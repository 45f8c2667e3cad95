import { formatDigitalLink } from '@hallmark/gs1';
import type { SqlExecutor } from '@hallmark/sql';

/**
 * What a code's link is written from besides the code's own fields: the resolver's origin and the
 * order of the link's path (HALLMARK_RESOLVER_URL, HALLMARK_LINK_ORDER). A row of `codes` names its
 * form (code-service migration 0009) instead of holding the link's text.
 */
export interface LinkForm {
  origin: string;
  order: 'spec' | 'gs1';
}

/** A link form with its id in `code_link_forms`. */
export interface StoredLinkForm extends LinkForm {
  id: number;
}

/** The fields of a code its link carries. */
export interface LinkedFields {
  gtin: string;
  serial: string;
  batch: string | null | undefined;
  expiry: string | null | undefined;
  signature: string;
}

/** A code's GS1 Digital Link: how POST /code/generate writes it, and how a row that names its form gives it back. */
export function linkOfCode(code: LinkedFields, form: LinkForm): string {
  const { gtin, serial, batch, expiry, signature } = code;
  return formatDigitalLink(
    { origin: form.origin, gtin, serial, ...(batch ? { batch } : {}), ...(expiry ? { expiry } : {}), signature },
    form.order,
  );
}

/** The id of this link form, stored once by whichever code-service asks first. */
export async function storeLinkForm(db: SqlExecutor, form: LinkForm): Promise<StoredLinkForm> {
  await db.query('INSERT INTO code_link_forms (origin, link_order) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
    form.origin,
    form.order,
  ]);
  const [row] = await db.query<{ id: number }>('SELECT id FROM code_link_forms WHERE origin = $1 AND link_order = $2', [
    form.origin,
    form.order,
  ]);
  if (!row) throw new Error('code_link_forms: the form just stored is not there');
  return { ...form, id: Number(row.id) };
}

/**
 * The link form new codes are stored with, or undefined while their links are stored whole: while
 * `allowed` says no (a code-service of a release before link forms is connected: runtime's
 * release-gates.ts), or the form's id could not be had (asked again next time).
 */
export function createLinkFormSource(
  db: SqlExecutor,
  form: LinkForm,
  allowed: () => Promise<boolean>,
): () => Promise<StoredLinkForm | undefined> {
  let stored: Promise<StoredLinkForm> | undefined;
  return async () => {
    if (!(await allowed())) return undefined;
    stored ??= storeLinkForm(db, form);
    try {
      return await stored;
    } catch {
      stored = undefined;
      return undefined;
    }
  };
}
