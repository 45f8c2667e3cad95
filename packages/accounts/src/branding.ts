import type { BrandingView, Environment, ResolvedIssuer } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import { claimValuesCovering } from './gtin-ownership.ts';

/**
 * A brand's settings for the resolver page (docs/RESOLVER.md, "The brand"): table
 * `account_branding` (accounts migration 0005), one row per account and environment.
 */

/** WCAG 2.2 AA for normal text: what the band's text must reach against its background. */
export const minimumContrast = 4.5;

const channel = (value: number) => {
  const c = value / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
};

/** WCAG relative luminance of `#rrggbb`. */
export function relativeLuminance(colour: string): number {
  const hex = colour.slice(1);
  const [r, g, b] = [0, 2, 4].map((at) => Number.parseInt(hex.slice(at, at + 2), 16)) as [number, number, number];
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}

/** WCAG contrast ratio of two `#rrggbb` colours, 1 to 21, rounded down to two decimals (never flattering). */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return Math.floor(((light + 0.05) / (dark + 0.05)) * 100) / 100;
}

/**
 * The text colour on a background when the brand set none: black or white, whichever contrasts
 * more. Every background reaches at least 4.58:1 with one of them, so the choice always passes AA.
 */
export function defaultTextColour(background: string): string {
  return contrastRatio(background, '#000000') >= contrastRatio(background, '#ffffff') ? '#000000' : '#ffffff';
}

/** The pair the page uses: the brand's text colour when set (it passed the check when stored), else the default. */
export function bandColours(primary: string | null, text: string | null): { primary: string; text: string } | null {
  if (!primary) return null;
  const chosen = text ?? defaultTextColour(primary);
  // Stored pairs were checked; one that somehow is not legible falls back to the default, never shown as is.
  return { primary, text: contrastRatio(primary, chosen) >= minimumContrast ? chosen : defaultTextColour(primary) };
}

export interface BrandingRow {
  display_name: string | null;
  primary_color: string | null;
  text_color: string | null;
  logo_sha256: string | null;
  logo_width: number | null;
  logo_height: number | null;
  logo_bytes: number | null;
  updated_at: Date | string | null;
}

const brandingColumns = `b.display_name, b.primary_color, b.text_color, b.logo_sha256, b.logo_width, b.logo_height,
  octet_length(b.logo_png) AS logo_bytes, b.updated_at`;

/** The branding of an account and environment as the API answers it (every field null when unset). */
export async function findBranding(
  sql: SqlExecutor,
  owner: { accountId: string; environment: Environment },
): Promise<BrandingView | undefined> {
  const rows = await sql.query<BrandingRow & { account_name: string }>(
    `SELECT a.name AS account_name, ${brandingColumns}
       FROM accounts a LEFT JOIN account_branding b ON b.account_id = a.id AND b.environment = $2
      WHERE a.id = $1`,
    [owner.accountId, owner.environment],
  );
  const row = rows[0];
  return row ? brandingView(row, row.account_name) : undefined;
}

export function brandingView(row: BrandingRow, accountName: string): BrandingView {
  const band = bandColours(row.primary_color, row.text_color);
  return {
    displayName: row.display_name,
    shownName: row.display_name ?? accountName,
    primaryColor: row.primary_color,
    textColor: band?.text ?? null,
    contrastRatio: band ? contrastRatio(band.primary, band.text) : null,
    logo:
      row.logo_sha256 === null
        ? null
        : {
            url: `/resolver/logos/${row.logo_sha256}.png`,
            sha256: row.logo_sha256,
            width: Number(row.logo_width),
            height: Number(row.logo_height),
            bytes: Number(row.logo_bytes),
          },
    updatedAt: row.updated_at === null ? null : new Date(row.updated_at).toISOString(),
  };
}

/** The settings after a change: what `PUT /account/branding` or `…/logo` writes in one statement. */
export interface BrandingChange {
  displayName?: string | null;
  primaryColor?: string | null;
  textColor?: string | null;
  /** A new logo, or null to remove it. */
  logo?: { sha256: string; png: Buffer; width: number; height: number } | null;
}

/**
 * Writes a change (fields left out keep their value) and answers the row as it now is. Meant to run
 * in the transaction of the change's audit event.
 */
export async function writeBranding(
  sql: SqlExecutor,
  owner: { accountId: string; environment: Environment },
  change: BrandingChange,
  now: Date,
): Promise<BrandingView> {
  const has = (field: keyof BrandingChange) => Object.hasOwn(change, field);
  await sql.query(
    `INSERT INTO account_branding (account_id, environment, display_name, primary_color, text_color,
                                   logo_sha256, logo_png, logo_width, logo_height, updated_at)
     VALUES ($1, $2, $4, $6, $8, $10, $11, $12, $13, $14)
     ON CONFLICT (account_id, environment) DO UPDATE SET
       display_name = CASE WHEN $3 THEN EXCLUDED.display_name ELSE account_branding.display_name END,
       primary_color = CASE WHEN $5 THEN EXCLUDED.primary_color ELSE account_branding.primary_color END,
       text_color = CASE WHEN $7 THEN EXCLUDED.text_color ELSE account_branding.text_color END,
       logo_sha256 = CASE WHEN $9 THEN EXCLUDED.logo_sha256 ELSE account_branding.logo_sha256 END,
       logo_png = CASE WHEN $9 THEN EXCLUDED.logo_png ELSE account_branding.logo_png END,
       logo_width = CASE WHEN $9 THEN EXCLUDED.logo_width ELSE account_branding.logo_width END,
       logo_height = CASE WHEN $9 THEN EXCLUDED.logo_height ELSE account_branding.logo_height END,
       updated_at = EXCLUDED.updated_at`,
    [
      owner.accountId,
      owner.environment,
      has('displayName'),
      change.displayName ?? null,
      has('primaryColor'),
      change.primaryColor ?? null,
      has('textColor'),
      change.textColor ?? null,
      has('logo'),
      change.logo?.sha256 ?? null,
      change.logo?.png ?? null,
      change.logo?.width ?? null,
      change.logo?.height ?? null,
      now,
    ],
  );
  const view = await findBranding(sql, owner);
  if (!view) throw new Error(`No account ${owner.accountId} to brand.`);
  return view;
}

/** The colours as the brand set them (the view shows the text colour in effect, which may be the default). */
export async function findStoredColours(
  sql: SqlExecutor,
  owner: { accountId: string; environment: Environment },
): Promise<{ primary: string | null; text: string | null }> {
  const rows = await sql.query<{ primary_color: string | null; text_color: string | null }>(
    'SELECT primary_color, text_color FROM account_branding WHERE account_id = $1 AND environment = $2',
    [owner.accountId, owner.environment],
  );
  return { primary: rows[0]?.primary_color ?? null, text: rows[0]?.text_color ?? null };
}

/** A stored logo by its SHA-256, for `/resolver/logos/<sha256>.png`: only logos are in this table. */
export async function findLogo(sql: SqlExecutor, sha256: string): Promise<Buffer | undefined> {
  const rows = await sql.query<{ logo_png: Uint8Array }>('SELECT logo_png FROM account_branding WHERE logo_sha256 = $1 LIMIT 1', [
    sha256,
  ]);
  const png = rows[0]?.logo_png;
  return png ? Buffer.from(png) : undefined;
}

/**
 * Who issued a code of this GTIN, as the resolver page names it: the account whose active claim
 * covers the GTIN (in `live`, or in the code's environment), with its branding in that environment.
 * Undefined when no account owns the GTIN: the operator signs such codes, and no brand is named.
 */
export async function findGtinIssuer(
  sql: SqlExecutor,
  environment: Environment,
  gtin: string,
): Promise<ResolvedIssuer | undefined> {
  const rows = await sql.query<BrandingRow & { account_id: string; account_name: string }>(
    `SELECT a.id AS account_id, a.name AS account_name, ${brandingColumns}
       FROM gtin_claims c
       JOIN accounts a ON a.id = c.account_id
       LEFT JOIN account_branding b ON b.account_id = a.id AND b.environment = $2
      WHERE c.revoked_at IS NULL AND c.value = ANY($1::text[]) AND (c.environment = 'live' OR c.environment = $2)
      LIMIT 1`,
    [claimValuesCovering(gtin), environment],
  );
  const row = rows[0];
  if (!row) return undefined;
  const band = bandColours(row.primary_color, row.text_color);
  return {
    accountId: row.account_id,
    name: row.display_name ?? row.account_name,
    accountName: row.account_name,
    primaryColor: band?.primary ?? null,
    textColor: band?.text ?? null,
    logo:
      row.logo_sha256 === null
        ? null
        : { sha256: row.logo_sha256, width: Number(row.logo_width), height: Number(row.logo_height) },
  };
}
