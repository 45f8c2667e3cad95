import { createHash } from 'node:crypto';
import type { Cache } from '@hallmark/cache';
import { endOfYymmdd } from '@hallmark/codes';
import {
  categories,
  gs1ResolverDescriptionRoute,
  HallmarkError,
  publicReportRpc,
  publicVerifyObjectRpc,
  type ResolvedScan,
  resolverOptionsRoute,
  resolverPageRoute,
  resolverReportRoute,
  resolveScanRpc,
} from '@hallmark/contracts';
import { parseDigitalLink } from '@hallmark/gs1';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ReportLimits } from '../auth/report-limits.ts';
import { registerRoute } from '../route-registry.ts';
import type { ServiceCaller } from '../service-call.ts';
import { linksetOf, resolverDescription } from './linkset.ts';
import {
  contentSecurityPolicy,
  dateFormatterFor,
  type PageVerdict,
  renderAuctionPage,
  renderCodePage,
  renderMessagePage,
  renderUnknownObjectPage,
} from './page.ts';
import { english } from './texts.ts';

type Wanted = 'html' | 'json' | 'linkset';

function wanted(request: FastifyRequest): Wanted {
  const linkType = (request.query as { linkType?: string }).linkType;
  if (linkType === 'linkset' || linkType === 'all') return 'linkset';
  const accept = request.headers.accept ?? '';
  if (accept.includes('application/linkset+json')) return 'linkset';
  if (accept.includes('application/json') && !accept.includes('text/html')) return 'json';
  return 'html';
}

/** Headers of every resolver answer: no third parties, no framing, no cookies, readable from any origin. */
function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', contentSecurityPolicy)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('access-control-allow-origin', '*')
    .header('cache-control', 'no-store')
    .header('vary', 'Accept, Accept-Language');
}

const html = (reply: FastifyReply, status: number, page: string) =>
  secure(reply).status(status).type('text/html; charset=utf-8').send(page);

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
 * The public resolver at the root (docs/RESOLVER.md): `GET /01/…` renders the verification page of
 * a scanned code (or JSON, or a linkset), `OPTIONS` answers CORS, `POST /resolver/report` takes the
 * page's report form, `/.well-known/gs1resolver` describes the resolver.
 */
export function registerResolverRoutes(
  app: FastifyInstance,
  deps: {
    services: ServiceCaller;
    cache: Cache;
    clock: () => Date;
    reloadWindowMs: number;
    /** Reports from the page's form per client address per hour. */
    reportLimits: ReportLimits;
    /** Scheme and host of this resolver, from configuration (never from the request's Host header). */
    publicOrigin: () => string;
  },
): void {
  const { reloadWindowMs } = deps;
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 16_384 },
    (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );

  registerRoute(app, resolverPageRoute, async (request, reply) => {
    const scannedUrl = `${deps.publicOrigin()}${request.url}`;
    const dates = dateFormatterFor(request.headers['accept-language']);
    const form = wanted(request);
    const parsed = parseDigitalLink(scannedUrl);
    if (!parsed.ok) {
      if (form !== 'html') throw new HallmarkError(parsed.problem.code, parsed.problem.message, parsed.problem.details);
      return html(reply, 400, renderMessagePage(english.error.badLinkTitle, parsed.problem.message, english.error.tryAgain));
    }
    const link = parsed.link;
    reply.header(
      'link',
      `<${deps.publicOrigin()}${request.url.split('?')[0]}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`,
    );
    if (form === 'linkset') {
      const pageUrl = new URL(scannedUrl);
      pageUrl.searchParams.delete('linkType');
      return secure(reply)
        .type('application/linkset+json')
        .send(linksetOf(deps.publicOrigin(), link, pageUrl.toString()));
    }
    if (link.serial === undefined || link.signature === undefined) {
      const problem = link.serial === undefined ? 'The code has no serial number (/21/).' : 'The code carries no signature.';
      if (form !== 'html') throw new HallmarkError(link.serial === undefined ? 'INVALID_URL' : 'MISSING_SIGNATURE', problem);
      return html(reply, 400, renderMessagePage(english.error.badLinkTitle, problem, english.error.tryAgain));
    }

    // An auction object's code: its `10` value is a category and its serial a service serial.
    if (link.batch !== undefined && (categories as string[]).includes(link.batch) && /^HM-/.test(link.serial)) {
      const verifiedAt = deps.clock();
      try {
        const object = await deps.services.call(
          publicVerifyObjectRpc,
          { serial: link.serial, presentedSignature: link.signature },
          request.id,
        );
        if (form === 'json') return secure(reply).send(object);
        const verdict: PageVerdict = object.status === 'authentic' ? 'authentic' : 'suspicious';
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
              verifiedAt,
            },
            dates,
          ),
        );
      } catch (error) {
        if (!(error instanceof HallmarkError && error.code === 'NOT_FOUND') || form === 'json') throw error;
        return html(reply, 200, renderUnknownObjectPage(link.serial, verifiedAt, dates));
      }
    }

    // A reload by the same client shortly after counts once: show the scan it already made. The key
    // is the whole signed message (a link with another batch, variant or expiry is another scan).
    const signedMessage = [link.gtin, link.serial, link.batch, link.variant, link.expiry, link.signature, request.ip];
    const seenKey = `resolver:seen:${createHash('sha256').update(JSON.stringify(signedMessage)).digest('base64url')}`;
    const seen = reloadWindowMs > 0 ? await deps.cache.get(seenKey) : undefined;
    let scan = seen ? (JSON.parse(seen) as ResolvedScan & { verifiedAt: string }) : undefined;
    if (!scan) {
      scan = {
        ...(await deps.services.call(resolveScanRpc, { url: scannedUrl, client: { address: request.ip } }, request.id)),
        verifiedAt: deps.clock().toISOString(),
      };
      if (reloadWindowMs > 0) await deps.cache.set(seenKey, JSON.stringify(scan), { ttlMs: reloadWindowMs });
    }
    if (form === 'json') {
      if (!scan.result)
        throw new HallmarkError('KEY_NOT_FOUND', 'No code with this number was ever issued.', {
          gtin: link.gtin,
          serial: link.serial,
        });
      return secure(reply).send(scan.result);
    }
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
          expiry: link.expiry ? new Date(endOfYymmdd(link.expiry).getTime() - 1) : undefined,
          scans: result?.metadata.totalScans,
          verifiedAt: new Date(scan.verifiedAt),
          riskIndicators: result?.riskIndicators ?? [],
          confirmedReport: result?.confirmedReport,
          testCode: scan.environment === 'test',
          link: scannedUrl,
        },
        dates,
      ),
    );
  });

  registerRoute(app, resolverOptionsRoute, async (_request, reply) =>
    secure(reply)
      .status(204)
      .header('access-control-allow-methods', 'GET, HEAD, OPTIONS')
      .header('access-control-allow-headers', 'Accept, Accept-Language, Content-Type')
      .header('access-control-max-age', '86400')
      .header('allow', 'GET, HEAD, OPTIONS')
      .send(),
  );

  registerRoute(app, resolverReportRoute, async (request, reply) => {
    const body = (request.body ?? {}) as { link?: unknown; reason?: unknown };
    const link = typeof body.link === 'string' ? body.link : '';
    const reason = typeof body.reason === 'string' && body.reason.trim() !== '' ? body.reason.trim().slice(0, 1000) : undefined;
    if (!parseDigitalLink(link).ok) {
      return html(reply, 400, renderMessagePage(english.error.badLinkTitle, english.error.badLink, english.error.tryAgain));
    }
    await deps.reportLimits.forAddress(reply, request.ip);
    const outcome = await deps.services.call(publicReportRpc, { url: link, ...(reason ? { reason } : {}) }, request.id);
    return outcome.recorded
      ? html(reply, 200, renderMessagePage(english.report.thanksTitle, english.report.thanks))
      : html(reply, 200, renderMessagePage(english.report.unknownTitle, english.report.unknown));
  });

  registerRoute(app, gs1ResolverDescriptionRoute, async (_request, reply) =>
    secure(reply).send(resolverDescription(deps.publicOrigin())),
  );
}
