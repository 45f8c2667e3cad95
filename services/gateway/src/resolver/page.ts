import { createHash } from 'node:crypto';
import { bandColours } from '@hallmark/accounts';
import type { ResolvedIssuer } from '@hallmark/contracts';
import { english } from './texts.ts';

export type PageVerdict = 'authentic' | 'suspicious' | 'counterfeit';

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] as string);

/**
 * Colours with WCAG 2.2 AA contrast (every text pair ≥ 4.5:1, the verdict panels ≥ 7:1), and the
 * verdict never told by colour alone: an icon and words say it too.
 */
const style = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f6f6f4}
main{max-width:40rem;margin:0 auto;padding:1rem}
header{font-size:.875rem;color:#4a4a4a;padding:.5rem 0}
.verdict{border:3px solid;border-radius:.75rem;padding:1rem 1.25rem;display:flex;gap:1rem;align-items:flex-start}
.verdict svg{flex:none;width:3rem;height:3rem}
.verdict h1{margin:0 0 .25rem;font-size:1.5rem;line-height:1.2}
.verdict p{margin:0}
.authentic{background:#e7f5ec;border-color:#1b7a3d;color:#0b4d22}
.suspicious{background:#fff3e0;border-color:#a35200;color:#6b3500}
.counterfeit{background:#fdeceb;border-color:#b3261e;color:#7a1711}
section{background:#fff;border-radius:.75rem;padding:1rem 1.25rem;margin-top:1rem;border:1px solid #d4d4d0}
h2{font-size:1.125rem;margin:0 0 .5rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0}
dt{color:#4a4a4a}
dd{margin:0;font-weight:600;overflow-wrap:anywhere}
ul{margin:.25rem 0 0;padding-left:1.25rem}
label{display:block;margin:.5rem 0 .25rem}
textarea{width:100%;min-height:5rem;font:inherit;padding:.5rem;border:1px solid #6b6b6b;border-radius:.5rem}
button{margin-top:.75rem;font:inherit;font-weight:600;padding:.625rem 1rem;border-radius:.5rem;border:0;background:#1f3a8a;color:#fff;cursor:pointer}
button:focus-visible,textarea:focus-visible{outline:3px solid #1f3a8a;outline-offset:2px}
.note{color:#4a4a4a;font-size:.875rem}
footer{font-size:.8125rem;color:#4a4a4a;margin:1.5rem 0}
.brand{display:flex;gap:.75rem;align-items:center;margin:0 -1rem 1rem;padding:.75rem 1rem;background:#fff;color:#1a1a1a;border-bottom:1px solid #d4d4d0}
.brand img{flex:none;max-height:3rem;max-width:8rem;width:auto;height:auto}
.brand p{margin:0;font-size:.875rem}
.brand strong{display:block;font-size:1.125rem;overflow-wrap:anywhere}
`.trim();

/**
 * The Content-Security-Policy of every resolver page: this inline style, and from this origin only a
 * brand's band stylesheet (/resolver/themes/…) and logo (/resolver/logos/…); nothing from anywhere else.
 */
export const contentSecurityPolicy = `default-src 'none'; style-src 'self' 'sha256-${createHash('sha256').update(style).digest('base64')}'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;

/** `/resolver/themes/<background>-<text>.css`: the band's colours, served by brand-assets.ts. */
export const themePath = (primary: string, text: string) => `/resolver/themes/${primary.slice(1)}-${text.slice(1)}.css`;
export const logoPath = (sha256: string) => `/resolver/logos/${sha256}.png`;

/**
 * The brand's band at the top of a code's page: logo, name and what the name is to this code. The
 * brand's colours are for this band only, never for the verdict, which keeps its own colours, icon
 * and words whatever the brand chose.
 */
function brandBand(issuer: ResolvedIssuer, role: string): string {
  const logo = issuer.logo
    ? `<img src="${logoPath(issuer.logo.sha256)}" width="${issuer.logo.width}" height="${issuer.logo.height}" alt="${escapeHtml(english.labels.logo(issuer.name))}">`
    : '';
  return `<div class="brand">${logo}<p>${escapeHtml(role)}<strong>${escapeHtml(vouchedNameOf(issuer))}</strong></p></div>`;
}

function themeLink(issuer: ResolvedIssuer | null | undefined): string {
  const band = issuer ? bandColours(issuer.primaryColor, issuer.textColor) : null;
  return band ? `<link rel="stylesheet" href="${themePath(band.primary, band.text)}">` : '';
}

const icons: Record<PageVerdict, string> = {
  authentic:
    '<svg viewBox="0 0 48 48" aria-hidden="true"><circle cx="24" cy="24" r="22" fill="#1b7a3d"/><path d="M14 25l7 7 13-15" stroke="#fff" stroke-width="5" fill="none" stroke-linecap="round" stroke-linejoin="round"/></svg>',
  suspicious:
    '<svg viewBox="0 0 48 48" aria-hidden="true"><path d="M24 3L46 43H2z" fill="#a35200"/><path d="M24 17v13" stroke="#fff" stroke-width="5" stroke-linecap="round"/><circle cx="24" cy="37" r="3" fill="#fff"/></svg>',
  counterfeit:
    '<svg viewBox="0 0 48 48" aria-hidden="true"><circle cx="24" cy="24" r="22" fill="#b3261e"/><path d="M16 16l16 16M32 16L16 32" stroke="#fff" stroke-width="5" stroke-linecap="round"/></svg>',
};

function layout(title: string, lang: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="${escapeHtml(lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(title)} – ${escapeHtml(english.siteName)}</title>
<style>${style}</style>${head}
</head>
<body>
<main>
<header>${escapeHtml(english.siteName)}</header>
${body}
<footer>${escapeHtml(english.footer)}</footer>
</main>
</body>
</html>
`;
}

function verdictPanel(verdict: PageVerdict, summary: string): string {
  const words = english.verdict[verdict];
  return `<div class="verdict ${verdict}" role="status">${icons[verdict]}<div><h1>${escapeHtml(words.headline)}</h1><p>${escapeHtml(summary)}</p></div></div>`;
}

function details(rows: ReadonlyArray<[string, string | undefined]>): string {
  const shown = rows.filter((row): row is [string, string] => row[1] !== undefined && row[1] !== '');
  return `<dl>${shown.map(([label, value]) => `<dt>${escapeHtml(label)}</dt><dd>${escapeHtml(value)}</dd>`).join('')}</dl>`;
}

export interface DateFormatter {
  dateTime(date: Date): string;
  date(date: Date): string;
}

/** Building Intl formatters costs more than rendering the page: keep one per Accept-Language seen. */
const formatters = new Map<string, DateFormatter>();

/** Dates in the viewer's locale (from Accept-Language), always with their time zone: UTC. */
export function dateFormatterFor(acceptLanguage: string | undefined): DateFormatter {
  const key = (acceptLanguage ?? '').slice(0, 200);
  let formatter = formatters.get(key);
  if (!formatter) {
    if (formatters.size >= 500) formatters.clear();
    formatter = buildDateFormatter(key);
    formatters.set(key, formatter);
  }
  return formatter;
}

function buildDateFormatter(acceptLanguage: string): DateFormatter {
  const wanted = acceptLanguage
    .split(',')
    .map((part) => part.split(';')[0]?.trim() ?? '')
    .filter((tag) => /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(tag))
    .slice(0, 10);
  const locale = wanted.find(isUsableLocale) ?? 'en-GB';
  const dateTime = new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeStyle: 'long', timeZone: 'UTC' });
  const date = new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' });
  return { dateTime: (value) => dateTime.format(value), date: (value) => date.format(value) };
}

/**
 * A tag Intl formats dates in. Asked one tag at a time: Intl throws (RangeError) on tags that have the
 * right shape but are not well-formed BCP 47 (`en-GB-oed`, a repeated subtag), and one of them among
 * the header's tags made the whole page a 500.
 */
function isUsableLocale(tag: string): boolean {
  try {
    return Intl.DateTimeFormat.supportedLocalesOf([tag]).length > 0;
  } catch {
    return false;
  }
}

export interface CodePage {
  verdict: PageVerdict;
  /**
   * The link's signature checked out under a key that could have signed it. False says nothing of
   * whether its serial was ever issued: a forged link's page is the same either way.
   */
  codeFound: boolean;
  productName: string | null;
  gtin: string;
  serial: string;
  batch?: string | undefined;
  expiry?: Date | undefined;
  scans?: number | undefined;
  verifiedAt: Date;
  riskIndicators: readonly string[];
  /** The brand confirmed a report of this code (blocked): why, when it said. */
  confirmedReport?: { reason: string | null } | undefined;
  /** Made with a test key: sandbox data, shown as that and never with a verdict. */
  testCode: boolean;
  /** The scanned link, for the report form. */
  link: string;
  /**
   * The account that owns the code's GTIN, with its branding (verify-service's answer); null when
   * no account owns it (the operator signed the code). Undefined: not known, nothing is claimed.
   */
  issuer?: ResolvedIssuer | null | undefined;
}

/** The facts of a code's page; `issuedBy` only where the page may name an issuer. */
function codeFacts(page: CodePage, dates: DateFormatter, issuedBy: string | undefined): string {
  return details([
    [english.labels.product, page.productName ?? (page.codeFound ? english.labels.unnamedProduct : undefined)],
    [english.labels.issuedBy, issuedBy],
    [english.labels.serial, page.serial],
    [english.labels.batch, page.batch],
    [english.labels.expiry, page.expiry ? dates.date(page.expiry) : undefined],
    [english.labels.gtin, page.gtin],
    [english.labels.scans, page.scans?.toString()],
    [english.labels.verifiedAt, dates.dateTime(page.verifiedAt)],
  ]);
}

/** Why the page warns: a line per risk indicator, and the brand's confirmed report; nothing without a risk. */
function warningSection(riskIndicators: readonly string[], confirmedReport: CodePage['confirmedReport']): string {
  const risks = riskIndicators.map((indicator) => english.risk[indicator]).filter((text) => text !== undefined);
  if (risks.length === 0) return '';
  const confirmed = confirmedReport
    ? `<p>${escapeHtml(english.labels.brandConfirmed)}${confirmedReport.reason ? `: ${escapeHtml(confirmedReport.reason)}` : '.'}</p>`
    : '';
  return `<section><h2>${escapeHtml(english.labels.whyWarning)}</h2><ul>${risks.map((text) => `<li>${escapeHtml(text)}</li>`).join('')}</ul>${confirmed}</section>`;
}

/** The shopper's report form (POST /resolver/report) of the scanned link. */
function reportSection(link: string): string {
  return `<section><h2>${escapeHtml(english.report.heading)}</h2><p class="note">${escapeHtml(english.report.intro)}</p>
<form method="post" action="/resolver/report"><input type="hidden" name="link" value="${escapeHtml(link)}">
<label for="reason">${escapeHtml(english.report.reasonLabel)}</label><textarea id="reason" name="reason" maxlength="1000"></textarea>
<button type="submit">${escapeHtml(english.report.submit)}</button></form></section>`;
}

/**
 * The issuer as the page names it where it vouches for it ("issued by … who owns its GTIN"): its
 * display name, and beside it the account's name as the operator registered it when the two differ.
 * A display name is the brand's own words: any tenant may choose another brand's (an audit of
 * 2026-12-07 had a tenant's genuine codes read "issued by" another tenant's name).
 */
function vouchedNameOf(issuer: ResolvedIssuer): string {
  return issuer.accountName !== undefined && issuer.accountName !== issuer.name
    ? english.registeredAs(issuer.name, issuer.accountName)
    : issuer.name;
}

export function renderCodePage(page: CodePage, dates: DateFormatter): string {
  if (page.testCode && page.codeFound) return renderTestCodePage(page, dates);
  const words = english.verdict[page.verdict];
  // Only a signature that checks out (authentic or suspicious) says who issued the code, and only the
  // GTIN's owner is ever named as issuer; a counterfeit names the GTIN's owner as that, nothing more.
  // A forged link's page says nothing of its serial (issued or not, its product): no oracle of serials.
  const signed = page.codeFound && page.verdict !== 'counterfeit';
  const summary =
    page.codeFound && page.verdict === 'counterfeit'
      ? english.verdict.counterfeit.listedSummary
      : !signed || page.issuer === undefined
        ? words.summary
        : page.issuer === null
          ? english.issuedByOperator
          : english.issuedBy(vouchedNameOf(page.issuer));
  const issuer = page.issuer ?? undefined;
  const band = issuer ? brandBand(issuer, signed ? english.labels.issuedBy : english.labels.gtinOwner) : '';
  const facts = codeFacts(
    page,
    dates,
    signed && page.issuer !== undefined
      ? page.issuer === null
        ? english.labels.noBrand
        : vouchedNameOf(page.issuer)
      : undefined,
  );
  const warning = warningSection(page.riskIndicators, page.confirmedReport);
  const report = page.verdict === 'authentic' ? '' : reportSection(page.link);
  return layout(
    words.headline,
    'en',
    `${band}${verdictPanel(page.verdict, summary)}
<section><h2>${escapeHtml(english.labels.product)}</h2>${facts}</section>
<section><h2>${escapeHtml(english.labels.whatToDo)}</h2><p>${escapeHtml(words.action)}</p></section>
${warning}${report}`,
    issuer ? themeLink(issuer) : '',
  );
}

/**
 * A test key's code whose signature checks out: sandbox data, as a test key's auction object is
 * shown. The test notice is the headline, never a verdict's; no issuer or brand is named (a test
 * claim is nobody's word to shoppers) and no report is taken.
 */
function renderTestCodePage(page: CodePage, dates: DateFormatter): string {
  const expired = page.riskIndicators.includes('EXPIRED_CODE');
  return layout(
    english.labels.testCode,
    'en',
    `${testPanel([english.testCode.summary, expired ? english.testCode.expired : ''])}
<section><h2>${escapeHtml(english.labels.product)}</h2>${codeFacts(page, dates, undefined)}</section>
<section><h2>${escapeHtml(english.labels.whatToDo)}</h2><p>${escapeHtml(english.testCode.action)}</p></section>`,
  );
}

export interface AuctionPage {
  verdict: PageVerdict;
  title: string;
  category: string;
  serial: string;
  tierLabel: string;
  registeredAt: Date;
  eventCount: number;
  chainIntact: boolean;
  latestEvent: string;
  currentOwner: string;
  photoBinding: string;
  /** Required angles with a photo held, and how many the category requires (auction-service's answer). */
  referencePhotos?: { bound: number; required: number } | undefined;
  /** Registered with a test key (`status: "test"`): the test notice is the headline, never a verdict's. */
  testObject?: boolean | undefined;
  /** A test object's code past its 24 hours. */
  tagExpired?: boolean | undefined;
  verifiedAt: Date;
  /** The tag's signature is the one issued for the object (a counterfeit verdict with it came from the scan: a block, a report). */
  signatureValid: boolean;
  /** The scan's reasons, when its verdict is worse than the object's own (objectLabelVerification). */
  riskIndicators: readonly string[];
  confirmedReport?: CodePage['confirmedReport'];
  /** The scanned link, for the report form. */
  link: string;
}

/** The panel of test data (a test key's code or object) in the verdict's place: the test notice as its headline, amber. */
function testPanel(lines: ReadonlyArray<string | undefined>): string {
  const summary = lines.filter((line) => line).join(' ');
  return `<div class="verdict suspicious" role="status">${icons.suspicious}<div><h1>${escapeHtml(english.labels.testCode)}</h1><p>${escapeHtml(summary)}</p></div></div>`;
}

/** The panel of a test key's object: the test notice, and whether its tag matched or expired. */
function testObjectPanel(page: AuctionPage): string {
  return testPanel([
    english.auction.test.summary,
    page.verdict === 'counterfeit' ? english.auction.summary.counterfeit : page.tagExpired ? english.auction.test.expired : '',
  ]);
}

/** The verdict's line: a counterfeit label with a genuine signature is one its house marked so, never a signature that does not match. */
function auctionSummary(page: AuctionPage): string | undefined {
  if (page.verdict === 'counterfeit' && page.signatureValid && page.riskIndicators.length > 0)
    return english.auction.listedSummary;
  return english.auction.summary[page.verdict];
}

export function renderAuctionPage(page: AuctionPage, dates: DateFormatter): string {
  const words = english.verdict[page.verdict];
  const test = page.testObject === true;
  const facts = details([
    [english.auction.category, page.category],
    [english.auction.serial, page.serial],
    [english.auction.security, page.tierLabel],
    [english.auction.registered, dates.date(page.registeredAt)],
    [english.labels.verifiedAt, dates.dateTime(page.verifiedAt)],
  ]);
  const photos = english.auction.photos(page.photoBinding, page.referencePhotos);
  const history = details([
    [english.auction.recorded, english.auction.events(page.eventCount)],
    [english.auction.latestEvent, page.latestEvent.replaceAll('_', ' ')],
    [english.auction.owner, page.currentOwner],
  ]);
  return layout(
    `${page.title}: ${test ? english.labels.testCode : words.headline}`,
    'en',
    `${test ? testObjectPanel(page) : verdictPanel(page.verdict, auctionSummary(page) ?? words.summary)}
<section><p class="note">${escapeHtml(english.auction.kicker)}</p><h2>${escapeHtml(page.title)}</h2>${facts}</section>
<section><h2>${escapeHtml(english.auction.history)}</h2>${history}
<p>${escapeHtml(page.chainIntact ? english.auction.chainIntact : english.auction.chainBroken)}</p>
<p>${escapeHtml(photos)}</p></section>
<section><h2>${escapeHtml(english.labels.whatToDo)}</h2><p>${escapeHtml(test ? english.auction.test.action : words.action)}</p></section>
${test ? '' : warningSection(page.riskIndicators, page.confirmedReport)}${test || page.verdict === 'authentic' ? '' : reportSection(page.link)}`,
  );
}

/** A page for a request the resolver could not answer: what went wrong and what to do. */
export function renderMessagePage(title: string, message: string, advice?: string): string {
  return layout(
    title,
    'en',
    `<section><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>${advice ? `<p>${escapeHtml(advice)}</p>` : ''}</section>`,
  );
}
