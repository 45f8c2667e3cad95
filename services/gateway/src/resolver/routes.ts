import { createHash } from 'node:crypto';
import type { CachedTable, CacheEpochs } from '@hallmark/accounts';
import type { Cache } from '@hallmark/cache';
import { endOfYymmdd } from '@hallmark/codes';
import {
  addressKeyOf,
  blockSeenByOthers,
  categories,
  gs1ResolverDescriptionRoute,
  HallmarkError,
  itemLinksRpc,
  linkTypeCurie,
  type PublicVerification,
  publicReportRpc,
  publicVerifyObjectRpc,
  type ResolvedScan,
  resolveCompressedOptionsRoute,
  resolveCompressedRoute,
  resolverOptionsRoute,
  resolverPageRoute,
  resolverReportRoute,
  resolveScanRpc,
  verificationPageOptionsRoute,
  verificationPageRoute,
} from '@hallmark/contracts';
import { type DigitalLink, decompressDigitalLink, isObjectLabel, looksCompressed, parseDigitalLink } from '@hallmark/gs1';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ReportLimits } from '../auth/report-limits.ts';
import { registerRoute } from '../route-registry.ts';
import type { ServiceCaller } from '../service-call.ts';
import { isCrossSiteForm } from './cross-site-form.ts';
import { isEmbeddedLoad } from './embedded-load.ts';
import { inLanguage, jsonLdContext, linksetOf, resolveLinks, resolverDescription } from './linkset.ts';
import {
  contentSecurityPolicy,
  type DateFormatter,
  dateFormatterFor,
  type PageVerdict,
  renderAuctionPage,
  renderCodePage,
  renderMessagePage,
} from './page.ts';
import { english } from './texts.ts';

type Wanted = 'html' | 'json' | 'linkset';

/** A link the verification page reads: it has a serial and a signature. */
type ScannedLink = DigitalLink & { serial: string; signature: string };

function wanted(request: FastifyRequest): Wanted {
  // No query is parsed for a request refused before routing (resolverPageOfUnrouted): read from the URL.
  const parsed = request.query as { linkType?: unknown } | null;
  const linkType = parsed ? parsed.linkType : new URLSearchParams(request.url.split('?')[1] ?? '').get('linkType');
  if (linkType === 'linkset' || linkType === 'all') return 'linkset';
  const accept = request.headers.accept ?? '';
  if (accept.includes('application/linkset+json')) return 'linkset';
  if (accept.includes('application/json') && !accept.includes('text/html')) return 'json';
  return 'html';
}

/**
 * A refusal made before routing (a printed link with a bad percent-encoding) of a printed link's path
 * (`/01/…`, `/verify/01/…`): answered with the resolver's headers, and as its page to a browser.
 */
export function resolverPageOfUnrouted(refusal: HallmarkError, request: FastifyRequest, reply: FastifyReply): boolean {
  if (!request.url.startsWith('/01/') && !request.url.startsWith('/verify/01/')) return false;
  // What the resolver's onSend hook adds to a routed answer, which this one never reaches.
  withResolverCors(withResolverHeaders(reply));
  if (!prefersHtml(request)) return false;
  reply.type('text/html; charset=utf-8').send(resolverErrorPage(refusal));
  return true;
}

/**
 * What a script elsewhere may do with a resolver answer: GS1's resolver test suite reads the allowed
 * methods on a GET's answer, not only on a preflight; a script may read the Link header (the linkset)
 * and where a redirect goes.
 */
function withResolverCors(reply: FastifyReply): FastifyReply {
  return reply
    .header('access-control-allow-origin', '*')
    .header('access-control-allow-methods', 'GET, HEAD, OPTIONS')
    .header('access-control-expose-headers', 'Link, Location');
}

/** Headers of every resolver answer: no third parties, no framing, no cookies, readable from any origin. */
export function withResolverHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', contentSecurityPolicy)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('access-control-allow-origin', '*')
    .header('cache-control', 'no-store')
    .header('vary', 'Accept, Accept-Language');
}

const html = (reply: FastifyReply, status: number, page: string) =>
  withResolverHeaders(reply).status(status).type('text/html; charset=utf-8').send(page);

/** The path and the query string (without `?`) of a request URL. */
function splitUrl(url: string): { path: string; query: string } {
  const at = url.indexOf('?');
  return at === -1 ? { path: url, query: '' } : { path: url.slice(0, at), query: url.slice(at + 1) };
}

/** The request's query string passed on to a link's target (GS1: by default, every key=value pair). */
const withQuery = (href: string, query: string) => (query ? `${href}${href.includes('?') ? '&' : '?'}${query}` : href);

const redirect = (reply: FastifyReply, location: string) => reply.status(307).header('location', location).send();

const noLinkTitle = 'No such link for this product';

/** Link types the resolver answers without the brand's links. */
const ourLinkTypes = new Set(['gs1:defaultLink', 'gs1:verificationService']);

/** Whether an error on a resolver route is answered as a page (browsers) rather than JSON. */
export function prefersHtml(request: FastifyRequest): boolean {
  return wanted(request) === 'html';
}

/** The resolver's page for an error raised before its handler (rate limit, validation). */
export function resolverErrorPage(error: HallmarkError): string {
  if (error.code === 'RATE_LIMITED') return renderMessagePage(english.error.busyTitle, english.error.busy);
  if (error.status >= 500) return renderMessagePage(english.error.unavailableTitle, english.error.unavailable);
  return renderMessagePage(english.error.badLinkTitle, english.error.badLink, english.error.tryAgain);
}

/**
 * Whether a scanned link has the shape of an auction object's label (docs/RESOLVER.md): a guess,
 * never a verdict. Its GTIN is the one derived from its serial (isObjectLabel): a brand's code of its
 * own GTIN with an object's serial and a category as batch is the brand's code (it showed as the
 * object's counterfeit label until 2026-12-06).
 */
function looksLikeObjectLabel(link: ScannedLink): boolean {
  return (
    isObjectLabel(link.gtin, link.serial) &&
    link.batch !== undefined &&
    (categories as string[]).includes(link.batch) &&
    /^HM-/.test(link.serial) &&
    link.variant === undefined &&
    link.expiry === undefined
  );
}

/**
 * What the page answers as JSON (docs/RESOLVER.md, "Each view of the page is a scan, once"): the
 * verification result as POST /code/verify gives it; for a test key's code the same marked as test
 * data, never a verdict (`verdict: "TEST"`, `environment: "test"`, confidence 0, as the public
 * auction verification answers a test object); for a link whose signature verifies under no key,
 * one counterfeit answer made from the link alone, whether or not its serial was ever issued (no
 * key id, no scan count: nothing that differs between the two).
 */
/** An object's public verification as its label's scan judged it: `status` and `confidence` the scan's where it is not AUTHENTIC. */
type ObjectLabelVerification = PublicVerification & {
  riskIndicators?: NonNullable<ResolvedScan['result']>['riskIndicators'];
  blocked?: ReturnType<typeof blockSeenByOthers>;
};

/**
 * An object label's verification: the object's own (signature, chain, photos) unless the scan of
 * the label says worse. A label the brand blocked as counterfeit, one of a confirmed report, one
 * signed by a key since revoked, or a clone scanned by many is counterfeit or suspicious here as
 * `POST /code/verify` says, never authentic. Before (2026-12-03), the page showed the object's own
 * status only, "Authentic product" for a blocked label, while the scan was recorded COUNTERFEIT.
 * A test object stays a test object.
 */
function objectLabelVerification(object: PublicVerification, scan: ResolvedScan): ObjectLabelVerification {
  if (object.status === 'test' || scan.environment === 'test') return object;
  const result = scan.result;
  if (result === null) return { ...object, status: 'counterfeit', confidence: 0.99, riskIndicators: [] };
  if (result.verdict === 'AUTHENTIC') return object;
  return {
    ...object,
    status: result.verdict === 'COUNTERFEIT' ? 'counterfeit' : 'suspicious',
    confidence: result.confidence,
    riskIndicators: result.riskIndicators,
    ...(result.blocked ? { blocked: blockSeenByOthers(result.blocked) } : {}),
  };
}

function verificationJson(scan: ResolvedScan, link: ScannedLink) {
  if (scan.result === null) {
    return {
      verdict: 'COUNTERFEIT' as const,
      confidence: 0.99,
      gtin: link.gtin,
      serial: link.serial,
      ...(link.batch !== undefined ? { batch: link.batch } : {}),
      checks: {
        signature: { passed: false, algorithm: 'Ed25519' as const },
        format: { passed: true, standard: 'GS1_DIGITAL_LINK' as const },
      },
      riskIndicators: [],
    };
  }
  // Verified on the owner's behalf, so the block came with the owner's notes: the public sees its kind and time.
  const result = scan.result.blocked ? { ...scan.result, blocked: blockSeenByOthers(scan.result.blocked) } : scan.result;
  if (scan.environment === 'test') return { ...result, verdict: 'TEST' as const, confidence: 0, environment: 'test' as const };
  return result;
}

/**
 * The public resolver at the root (docs/RESOLVER.md): `GET /01/…` (and a compressed link) redirects
 * to the item's default link or the requested link type, or answers its linkset; `GET /verify/01/…`
 * renders the verification page of a scanned code (or JSON); `OPTIONS` answers CORS; `POST
 * /resolver/report` takes the page's report form; `/.well-known/gs1resolver` describes the resolver.
 */
export function registerResolverRoutes(
  app: FastifyInstance,
  deps: {
    services: ServiceCaller;
    cache: Cache;
    clock: () => Date;
    reloadWindowMs: number;
    /** The cache epochs this gateway watches: a reload shows an earlier scan only while none of what its verdict read has changed. */
    epochs: Pick<CacheEpochs, 'current'>;
    /** Reports from the page's form per client address per hour. */
    reportLimits: ReportLimits;
    /** Scheme and host of this resolver, from configuration (never from the request's Host header). */
    publicOrigin: () => string;
    /** The origins a page of this gateway has: the configured one and the one the request reached. */
    ownOrigins: (request: FastifyRequest) => string[];
  },
): void {
  const { reloadWindowMs } = deps;
  // Every answer of a resolver route is readable from any origin, errors raised before or in a handler too.
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.routeOptions.config?.route?.tags.includes('resolver')) {
      withResolverCors(reply);
      // An error is a page or a JSON envelope by Accept, wherever it was raised (a limit's 429 before
      // the route, a compressed link that does not decompress): said so, and kept out of caches, as
      // every other resolver answer is (a review of 2026-12-05: these two carried neither).
      if (reply.statusCode >= 400) {
        if (!reply.hasHeader('vary')) reply.header('vary', 'Accept, Accept-Language');
        if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
      }
    }
    return payload;
  });
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 16_384 },
    (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );

  registerRoute(app, resolverPageRoute, async (request, reply) => {
    const { path, query } = splitUrl(request.url);
    return resolveItem(request, reply, path, query);
  });

  registerRoute(app, resolveCompressedRoute, async (request, reply) => {
    const { path, query } = splitUrl(request.url);
    const segment = path.slice(1);
    if (!looksCompressed(segment)) throw new HallmarkError('NOT_FOUND', `There is no ${request.method} ${path}.`);
    const decompressed = decompressDigitalLink(`${deps.publicOrigin()}${path}${query ? `?${query}` : ''}`);
    if (!decompressed.ok) {
      const message = `The compressed GS1 Digital Link does not decompress: ${decompressed.message}`;
      if (wanted(request) !== 'html') throw new HallmarkError('INVALID_URL', message);
      return html(reply, 400, renderMessagePage(english.error.badLinkTitle, message, english.error.tryAgain));
    }
    const uncompressed = splitUrl(decompressed.uncompressed.slice(deps.publicOrigin().length));
    return resolveItem(request, reply, uncompressed.path, uncompressed.query, decompressed.uncompressed);
  });

  /**
   * A scanned item at the resolver (docs/RESOLVER.md, "What the resolver answers"): the linkset, or
   * a 307 to the requested link type or to the default link (JSON readers to the verification page,
   * which answers JSON). A trailing slash is ignored; the `Link` header names the linkset on every
   * answer. Nothing here is a scan: the page the redirect leads to counts it.
   */
  async function resolveItem(request: FastifyRequest, reply: FastifyReply, rawPath: string, query: string, sameAs?: string) {
    const origin = deps.publicOrigin();
    const path = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath;
    const printedUrl = `${origin}${path}${query ? `?${query}` : ''}`;
    const form = wanted(request);
    // An item's link: a linkset, a link type or the description of an item needs no signature; only the page verifies one.
    const parsed = parseDigitalLink(printedUrl, { signature: 'optional' });
    if (!parsed.ok) {
      withResolverHeaders(reply);
      if (form !== 'html') throw new HallmarkError(parsed.problem.code, parsed.problem.message, parsed.problem.details);
      return html(reply, 400, renderMessagePage(english.error.badLinkTitle, parsed.problem.message, english.error.tryAgain));
    }
    const link = parsed.link;
    const headerLinks = [`<${origin}${path}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`];
    if (sameAs) headerLinks.push(`<${sameAs}>; rel="owl:sameAs"`);
    reply.header('link', headerLinks.join(', '));
    withResolverHeaders(reply);

    const linkType = new URLSearchParams(query).get('linkType') ?? undefined;
    // Every key=value pair but linkType goes on to the target, byte for byte.
    const passedOn = query
      .split('&')
      .filter((pair) => pair !== '' && !/^linkType(=|$)/.test(pair))
      .join('&');
    const pageUrl = `${origin}/verify${path}${passedOn ? `?${passedOn}` : ''}`;
    // Without code-service (the brand's links), a scan still reaches the verification page, the
    // default of every item; what needs the brand's links (the linkset, another link type) waits for it.
    const needsBrandLinks = form === 'linkset' || (linkType !== undefined && !ourLinkTypes.has(linkTypeCurie(linkType) ?? ''));
    const brandLinks = await deps.services
      .call(
        itemLinksRpc,
        {
          gtin: link.gtin,
          ...(link.batch !== undefined ? { lot: link.batch } : {}),
          ...(link.serial !== undefined ? { serial: link.serial } : {}),
        },
        request.id,
      )
      .then((answer) => answer.links)
      .catch((error: unknown) => {
        if (needsBrandLinks) throw error;
        request.log.warn({ err: error }, 'the brand’s links are unavailable; the scan goes to the verification page');
        return [];
      });
    const resolved = resolveLinks(brandLinks, pageUrl);

    if (form === 'linkset') {
      reply.header(
        'link',
        [...headerLinks, `<${jsonLdContext}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`].join(', '),
      );
      return reply.type('application/linkset+json').send(linksetOf(origin, link, resolved));
    }
    if (linkType === undefined || linkTypeCurie(linkType) === 'gs1:defaultLink') {
      if (form === 'json') return redirect(reply, pageUrl);
      return redirect(reply, withQuery(resolved.defaultLink.href, resolved.defaultIsOurs ? '' : passedOn));
    }
    const curie = linkTypeCurie(linkType);
    const target = curie ? inLanguage(resolved.byType.get(curie) ?? [], request.headers['accept-language']) : undefined;
    if (!target) {
      const available = ['gs1:defaultLink', ...resolved.byType.keys()];
      const message = `This item has no link of type ${linkType}. Its link types: ${available.join(', ')}; or ask for linkType=linkset.`;
      if (form === 'html') return html(reply, 404, renderMessagePage(noLinkTitle, message));
      throw new HallmarkError('NOT_FOUND', message, { linkType, available });
    }
    return redirect(reply, withQuery(target.href, target.ours ? '' : passedOn));
  }

  /**
   * An auction object's public verification of its scanned label; undefined when no object has the
   * serial, so the link is verified as a brand's code (a brand may print a serial starting `HM-`
   * with a batch named like a category).
   */
  async function publicObjectOf(request: FastifyRequest, link: ScannedLink): Promise<PublicVerification | undefined> {
    try {
      return await deps.services.call(
        publicVerifyObjectRpc,
        { serial: link.serial, presentedSignature: link.signature, presentedGtin: link.gtin, presentedBatch: link.batch },
        request.id,
      );
    } catch (error) {
      if (error instanceof HallmarkError && error.code === 'NOT_FOUND') return undefined;
      throw error;
    }
  }

  /**
   * The scan of a link, counted once per client and reload window: a reload by the same client
   * shortly after shows the scan it already made. The key is the whole signed message (a link with
   * another batch, variant or expiry is another scan), the client as the per-address limits see it
   * (an IPv6 /64, an IPv4 address however written), and the epochs of what the verdict read (keys,
   * GTIN claims, blocks, the blocklist, the owner's thresholds and branding): once one of them moves
   * (a key revoked, a code blocked), a reload is verified, and counted, again. Before, a reload within
   * the window showed AUTHENTIC for a code whose key had just been revoked or which its owner had
   * just blocked, while POST /code/verify said otherwise.
   */
  function scanOf(request: FastifyRequest, link: DigitalLink, scannedUrl: string): Promise<SeenScan> {
    const client = addressKeyOf(request.ip);
    const standing = verdictInputs.map((table) => deps.epochs.current(table));
    const signedMessage = [link.gtin, link.serial, link.batch, link.variant, link.expiry, link.signature, client, standing];
    const seenKey = `resolver:seen:${createHash('sha256').update(JSON.stringify(signedMessage)).digest('base64url')}`;
    // A code whose expiry date ends within the window is seen again after it: the scan before it said
    // AUTHENTIC, a reload after it must say EXPIRED_CODE as the API does (it showed the earlier page
    // for the rest of the window until 2026-12-06).
    const now = deps.clock().getTime();
    const untilExpiry = link.expiry ? endOfYymmdd(link.expiry, new Date(now)).getTime() - now : Number.POSITIVE_INFINITY;
    const windowMs = untilExpiry > 0 ? Math.min(reloadWindowMs, untilExpiry) : reloadWindowMs;
    return scanOncePerWindow(deps.cache, seenKey, windowMs, async () => ({
      ...(await deps.services.call(resolveScanRpc, { url: scannedUrl, client: { address: request.ip } }, request.id)),
      verifiedAt: deps.clock().toISOString(),
    }));
  }

  /** The page of an object's label, with the verdict objectLabelVerification gives it. */
  function auctionObjectPage(
    reply: FastifyReply,
    object: ObjectLabelVerification,
    scan: SeenScan,
    link: string,
    dates: DateFormatter,
  ) {
    const verdict: PageVerdict =
      object.status === 'authentic' ? 'authentic' : object.status === 'counterfeit' ? 'counterfeit' : 'suspicious';
    return html(
      reply,
      200,
      renderAuctionPage(
        {
          verdict: object.cryptographic_identity.signature_valid ? verdict : 'counterfeit',
          title: object.object.title,
          category: object.object.category,
          serial: object.object.serial,
          tierLabel: object.security.tier_label,
          registeredAt: new Date(object.object.registered_at),
          eventCount: object.provenance.event_count,
          chainIntact: object.provenance.chain_intact,
          latestEvent: object.provenance.latest_event,
          currentOwner: object.provenance.current_owner,
          photoBinding: object.cryptographic_identity.photo_binding,
          referencePhotos: object.cryptographic_identity.reference_photos,
          testObject: object.environment === 'test' || object.status === 'test',
          tagExpired: object.cryptographic_identity.tag_status === 'expired',
          verifiedAt: new Date(scan.verifiedAt),
          signatureValid: object.cryptographic_identity.signature_valid,
          riskIndicators: object.riskIndicators ?? [],
          confirmedReport: scan.result?.confirmedReport,
          link,
        },
        dates,
      ),
    );
  }

  registerRoute(app, verificationPageRoute, async (request, reply) => {
    const printedPath = request.url.slice('/verify'.length);
    const scannedUrl = `${deps.publicOrigin()}${printedPath}`;
    const dates = dateFormatterFor(request.headers['accept-language']);
    const form = wanted(request) === 'json' ? 'json' : 'html';
    const parsed = parseDigitalLink(scannedUrl);
    withResolverHeaders(reply);
    if (!parsed.ok) {
      if (form !== 'html') throw new HallmarkError(parsed.problem.code, parsed.problem.message, parsed.problem.details);
      return html(reply, 400, renderMessagePage(english.error.badLinkTitle, parsed.problem.message, english.error.tryAgain));
    }
    const link = parsed.link;
    reply.header(
      'link',
      `<${deps.publicOrigin()}${printedPath.split('?')[0]}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`,
    );
    // Another page's image, frame, script or fetch, or a prefetch, is never a scan (embedded-load.ts):
    // refused before anything is verified or counted.
    if (isEmbeddedLoad(request.headers)) {
      const problem = english.error.embedded;
      if (form !== 'html') throw new HallmarkError('EMBEDDED_LOAD_REFUSED', problem);
      return html(reply, 403, renderMessagePage(english.error.embeddedTitle, problem));
    }
    if (link.serial === undefined || link.signature === undefined) {
      const problem = link.serial === undefined ? 'The code has no serial number (/21/).' : 'The code carries no signature.';
      if (form !== 'html') throw new HallmarkError(link.serial === undefined ? 'INVALID_URL' : 'MISSING_SIGNATURE', problem);
      return html(reply, 400, renderMessagePage(english.error.badLinkTitle, problem, english.error.tryAgain));
    }
    // HEAD is not a scan: a phone's prefetch or a link checker counts nothing. It answers the status
    // GET would give before any verification (a refused embedded load, a link without serial or
    // signature), as HEAD must (RFC 9110, 9.3.2); it answered 200 to those before 2026-12-07.
    if (request.method === 'HEAD')
      return reply
        .status(200)
        .type(form === 'json' ? 'application/json' : 'text/html; charset=utf-8')
        .send();
    const scanned: ScannedLink = { ...link, serial: link.serial, signature: link.signature };

    // An auction object's label: its `10` value is a category, its serial a service serial, and it
    // carries nothing else (an object's label is issued without a variant or an expiry, so a link
    // with either is no object's label, whatever its signature). Only a guess from the link's shape:
    // a serial no object has is a brand's code like any other, verified below. Its scan is counted
    // and judged as a code's (blocklist, confirmed reports, risk rules), and the page shows the
    // object with that verdict.
    const [object, scan] = await Promise.all([
      looksLikeObjectLabel(scanned) ? publicObjectOf(request, scanned) : undefined,
      scanOf(request, link, scannedUrl),
    ]);
    if (object) {
      const verified = objectLabelVerification(object, scan);
      return form === 'json'
        ? withResolverHeaders(reply).send(verified)
        : auctionObjectPage(reply, verified, scan, scannedUrl, dates);
    }
    if (form === 'json') return withResolverHeaders(reply).send(verificationJson(scan, scanned));
    const result = scan.result;
    return html(
      reply,
      200,
      renderCodePage(
        {
          verdict: result ? (result.verdict.toLowerCase() as PageVerdict) : 'counterfeit',
          codeFound: scan.codeFound,
          productName: scan.productName,
          gtin: link.gtin,
          serial: link.serial,
          batch: link.batch,
          expiry: link.expiry ? lastDayOfExpiry(link.expiry, new Date(scan.verifiedAt)) : undefined,
          scans: result?.metadata.totalScans,
          verifiedAt: new Date(scan.verifiedAt),
          riskIndicators: result?.riskIndicators ?? [],
          confirmedReport: result?.confirmedReport,
          testCode: scan.environment === 'test',
          link: scannedUrl,
          issuer: scan.issuer,
        },
        dates,
      ),
    );
  });

  const preflight = async (_request: FastifyRequest, reply: FastifyReply) =>
    withResolverHeaders(reply)
      .status(204)
      .header('access-control-allow-methods', 'GET, HEAD, OPTIONS')
      .header('access-control-allow-headers', 'Accept, Accept-Language, Content-Type')
      .header('access-control-max-age', '86400')
      .header('allow', 'GET, HEAD, OPTIONS')
      .send();
  registerRoute(app, resolverOptionsRoute, preflight);
  registerRoute(app, verificationPageOptionsRoute, preflight);
  registerRoute(app, resolveCompressedOptionsRoute, preflight);

  registerRoute(app, resolverReportRoute, async (request, reply) => {
    const body = (request.body ?? {}) as { link?: unknown; reason?: unknown };
    const link = typeof body.link === 'string' ? body.link : '';
    const reason = typeof body.reason === 'string' && body.reason.trim() !== '' ? body.reason.trim().slice(0, 1000) : undefined;
    const parsed = parseDigitalLink(link);
    if (!parsed.ok) {
      // The page says what is wrong with the link, as every other reader of a link does.
      return html(reply, 400, renderMessagePage(english.error.badLinkTitle, parsed.problem.message, english.error.tryAgain));
    }
    if (isCrossSiteForm(request.headers, deps.ownOrigins(request))) {
      return html(reply, 403, renderMessagePage(english.report.crossSiteTitle, english.report.crossSite));
    }
    await deps.reportLimits.forAddress(reply, request.ip);
    const outcome = await deps.services.call(publicReportRpc, { url: link, ...(reason ? { reason } : {}) }, request.id);
    return outcome.recorded
      ? html(reply, 200, renderMessagePage(english.report.thanksTitle, english.report.thanks))
      : html(reply, 200, renderMessagePage(english.report.unknownTitle, english.report.unknown));
  });

  registerRoute(app, gs1ResolverDescriptionRoute, async (_request, reply) =>
    withResolverHeaders(reply).send(resolverDescription(deps.publicOrigin())),
  );
}

/**
 * The last day of a link's AI 17 expiry as its verdict read it: by GS1's century rule at the time
 * of the scan (17=991231 is 1999). For a code Hallmark stored this is its stored 20YY date, as
 * generation keeps AI 17 years within 50 years of the day it signs them.
 */
function lastDayOfExpiry(yymmdd: string, scannedAt: Date): Date {
  return new Date(endOfYymmdd(yymmdd, scannedAt).getTime() - 1);
}

type SeenScan = ResolvedScan & { verifiedAt: string };

/** The cached tables a scan's verdict reads, whose change ends a reload window's scan (every one but API keys). */
const verdictInputs: readonly CachedTable[] = [
  'verification_keys',
  'gtin_claims',
  'gtin_claims_added',
  'code_blocks',
  'code_blocklist',
  'compliance_configs',
  'account_branding',
];

/** What `resolver:seen:` holds while the client's first load of a link is being verified. */
const scanInProgress = 'pending';
const reloadPollMs = 25;
/** How long a load waits for the same client's load in progress before it verifies (and counts) on its own. */
const reloadWaitMs = 1_000;

/**
 * The scan this client made of this link within the reload window, else one made now (`scanNow`,
 * which counts it). Loads at once, on any gateway replica, count once: the first claims the key
 * (set-if-absent) and the others wait for its scan; a claim whose load fails is released. Before,
 * each of four loads sent together counted a scan of its own.
 */
async function scanOncePerWindow(cache: Cache, seenKey: string, windowMs: number, scanNow: () => Promise<SeenScan>) {
  if (windowMs <= 0) return scanNow();
  for (let waitedMs = 0; ; waitedMs += reloadPollMs) {
    const seen = await cache.get(seenKey);
    if (seen !== undefined && seen !== scanInProgress) return JSON.parse(seen) as SeenScan;
    if (seen === undefined && (await cache.setIfAbsent(seenKey, scanInProgress, windowMs))) break;
    if (waitedMs >= reloadWaitMs) return scanNow();
    await new Promise((resolve) => setTimeout(resolve, reloadPollMs));
  }
  let scan: SeenScan;
  try {
    scan = await scanNow();
  } catch (error) {
    await cache.delete(seenKey).catch(() => undefined);
    throw error;
  }
  await cache.set(seenKey, JSON.stringify(scan), { ttlMs: windowMs });
  return scan;
}
