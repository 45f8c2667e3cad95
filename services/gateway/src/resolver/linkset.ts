import { gs1LinkTypes, gs1VocabularyNamespace, type LinkView } from '@hallmark/contracts';
import type { DigitalLink } from '@hallmark/gs1';

/** GS1's JSON-LD context for resolver linksets, named in a `Link` header beside every linkset. */
export const jsonLdContext = 'https://ref.gs1.org/standards/resolver/linkset-context';

/** One link as the linkset and the redirects use it; `ours` for Hallmark's verification page. */
export interface ResolvedLink {
  href: string;
  title: string;
  type: string;
  hreflang: string[];
  ours: boolean;
}

export interface ResolvedLinks {
  /** Where a scan goes without a linkType: the brand's default for the item, else the verification page. */
  defaultLink: { href: string; title: string };
  defaultIsOurs: boolean;
  /** Every other link by its link type's CURIE: the verification page, then the brand's. */
  byType: Map<string, ResolvedLink[]>;
}

const verificationTitle = 'Verify this product';

/**
 * The links of a scanned item: Hallmark's verification page is `gs1:verificationService` and the
 * default; the brand's links (most specific first, as code-service answers them) add their types,
 * each type from the most specific level that has it (serial over lot over GTIN), and the brand's
 * most specific default link, if any, replaces the page as the default.
 */
export function resolveLinks(brandLinks: readonly LinkView[], pageUrl: string): ResolvedLinks {
  const page: ResolvedLink = { href: pageUrl, title: verificationTitle, type: 'text/html', hreflang: [], ours: true };
  const byType = new Map<string, ResolvedLink[]>([['gs1:verificationService', [page]]]);
  const specificity = (link: LinkView) => (link.serial !== null ? 2 : 0) + (link.lot !== null ? 1 : 0);
  const levelOfType = new Map<string, number>();
  let brandDefault: LinkView | undefined;
  for (const link of brandLinks) {
    if (link.default && brandDefault === undefined) brandDefault = link;
    const level = specificity(link);
    const seen = levelOfType.get(link.linkType);
    if (seen !== undefined && seen > level) continue;
    levelOfType.set(link.linkType, level);
    const list = byType.get(link.linkType) ?? [];
    list.push({ href: link.href, title: link.title, type: link.type, hreflang: link.hreflang, ours: false });
    byType.set(link.linkType, list);
  }
  return brandDefault
    ? { defaultLink: { href: brandDefault.href, title: brandDefault.title }, defaultIsOurs: false, byType }
    : { defaultLink: { href: page.href, title: page.title }, defaultIsOurs: true, byType };
}

/**
 * Of several links of one type, the one in the reader's language (`Accept-Language`, by its q
 * values; a link for `de` serves `de-CH` and the other way round), else the first.
 */
export function inLanguage<T extends { hreflang: string[] }>(
  links: readonly T[],
  acceptLanguage: string | undefined,
): T | undefined {
  if (links.length <= 1 || !acceptLanguage) return links[0];
  const wanted = acceptLanguage
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = Number(
        params
          .find((param) => param.trim().startsWith('q='))
          ?.trim()
          .slice(2) ?? '1',
      );
      return { tag: tag.toLowerCase(), q: Number.isFinite(q) ? q : 0, index };
    })
    .filter((entry) => entry.tag !== '' && entry.tag !== '*' && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  const primary = (tag: string) => tag.split('-')[0];
  for (const { tag } of wanted) {
    const exact = links.find((link) => link.hreflang.some((lang) => lang.toLowerCase() === tag));
    if (exact) return exact;
    const near = links.find((link) => link.hreflang.some((lang) => primary(lang.toLowerCase()) === primary(tag)));
    if (near) return near;
  }
  return links[0];
}

/** The item's identity URI without signature, qualifiers in GS1's order (22, 10, 21). */
export function anchorOf(origin: string, link: DigitalLink): string {
  let path = `/01/${link.gtin}`;
  if (link.variant !== undefined) path += `/22/${encodeURIComponent(link.variant)}`;
  if (link.batch !== undefined) path += `/10/${encodeURIComponent(link.batch)}`;
  if (link.serial !== undefined) path += `/21/${encodeURIComponent(link.serial)}`;
  return `${origin}${path}`;
}

const uriOf = (curie: string) => `${gs1VocabularyNamespace}${curie.slice('gs1:'.length)}`;

/**
 * The RFC 9264 linkset of a scanned item, valid against GS1's linkset schema: the anchor, an item
 * description, exactly one `gs1:defaultLink` carrying only href and title, and every other link
 * with href, title and type (and hreflang when the brand gave one).
 */
export function linksetOf(origin: string, link: DigitalLink, links: ResolvedLinks) {
  const parts = [`GTIN ${link.gtin}`];
  if (link.batch !== undefined) parts.push(`lot ${link.batch}`);
  if (link.serial !== undefined) parts.push(`serial ${link.serial}`);
  const entry: Record<string, unknown> = {
    anchor: anchorOf(origin, link),
    itemDescription: parts.join(', '),
    [uriOf('gs1:defaultLink')]: [{ href: links.defaultLink.href, title: links.defaultLink.title }],
  };
  for (const [type, list] of links.byType) {
    entry[uriOf(type)] = list.map((item) => ({
      href: item.href,
      title: item.title,
      type: item.type,
      ...(item.hreflang.length > 0 ? { hreflang: item.hreflang } : {}),
    }));
  }
  return { linkset: [entry] };
}

/**
 * What /.well-known/gs1resolver says about this resolver, valid against GS1's description-file
 * schema (1.2.0): primary keys by AI, the GS1 link-type namespace, linkset as default possible,
 * where the linkset's JSON-LD context is; and, beyond the schema, the link types it serves and
 * where the signing keys are.
 */
export function resolverDescription(origin: string) {
  return {
    name: 'Hallmark resolver',
    resolverRoot: origin,
    supportedPrimaryKeys: ['01'],
    supportedContextValuesEnumerated: [],
    linkTypeDefaultCanBeLinkset: false,
    supportedLinkType: [{ namespace: gs1VocabularyNamespace, prefix: 'gs1:' }],
    jsonLdContextLocation: jsonLdContext,
    activeLinkTypes: ['gs1:defaultLink', 'gs1:verificationService', ...gs1LinkTypes.map((type) => `gs1:${type}`)],
    validatingSignatures: { algorithm: 'Ed25519', parameter: 'sig', keys: `${origin}/.well-known/jwks.json` },
  };
}
