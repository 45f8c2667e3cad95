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
  /**
   * The signing key id of its codes (code-service migration 0010), so a row leaves its key id out
   * too; null for a form whose rows hold their key ids.
   */
  kid?: string | null;
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
  const params = [form.origin, form.order, form.kid ?? null];
  await db.query('INSERT INTO code_link_forms (origin, link_order, kid) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', params);
  const [row] = await db.query<{ id: number }>(
    'SELECT id FROM code_link_forms WHERE origin = $1 AND link_order = $2 AND kid IS NOT DISTINCT FROM $3',
    params,
  );
  if (!row) throw new Error('code_link_forms: the form just stored is not there');
  return { ...form, kid: form.kid ?? null, id: Number(row.id) };
}

const maxRememberedForms = 10_000;

/**
 * The link form new codes signed with a key are stored with, or undefined while their links are
 * stored whole: while `allowed.links` says no (a code-service of a release before link forms is
 * connected: runtime's release-gates.ts), or the form's id could not be had (asked again next time).
 * The form names the key while `allowed.keys` says yes (no code-service of a release before key forms
 * is connected); else it names none, and the rows keep their key ids.
 */
export function createLinkFormSource(
  db: SqlExecutor,
  form: Omit<LinkForm, 'kid'>,
  allowed: { links: () => Promise<boolean>; keys: () => Promise<boolean> },
): (kid: string) => Promise<StoredLinkForm | undefined> {
  // By key id ('' for the form without one): a form for each signing key this process signs with.
  const stored = new Map<string, Promise<StoredLinkForm>>();
  return async (kid) => {
    if (!(await allowed.links())) return undefined;
    const formKid = (await allowed.keys()) ? kid : null;
    const cacheKey = formKid ?? '';
    let pending = stored.get(cacheKey);
    if (!pending) {
      // Forms of keys long rotated out are asked for again, if ever, rather than kept forever.
      if (stored.size >= maxRememberedForms) stored.clear();
      pending = storeLinkForm(db, { ...form, kid: formKid });
      stored.set(cacheKey, pending);
    }
    try {
      return await pending;
    } catch {
      stored.delete(cacheKey);
      return undefined;
    }
  };
}
