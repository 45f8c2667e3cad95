import { contrastRatio, findLogo, minimumContrast } from '@hallmark/accounts';
import { brandLogoRoute, brandThemeRoute, HallmarkError } from '@hallmark/contracts';
import type { SqlDatabase } from '@hallmark/sql';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { registerRoute } from '../route-registry.ts';

const paramOf = (params: unknown) => (params as { file: string }).file;

/** Content-addressed, so never stale; only this origin may embed them; never run as a document. */
function immutable(reply: FastifyReply, type: string): FastifyReply {
  return reply
    .type(type)
    .header('cache-control', 'public, max-age=31536000, immutable')
    .header('cross-origin-resource-policy', 'same-origin')
    .header('content-security-policy', "default-src 'none'; sandbox")
    .header('x-content-type-options', 'nosniff');
}

/**
 * What a brand's band on the resolver page loads, from this origin only (docs/RESOLVER.md, "The
 * brand"): `/resolver/logos/<sha256>.png`, a logo the gateway re-encoded when it was uploaded (only
 * logos are in `account_branding`, so no other stored bytes can be named), and
 * `/resolver/themes/<background>-<text>.css`, the band's two colours, made from the name itself (a
 * pair under WCAG AA contrast is 404, so the page cannot be made illegible by a crafted name).
 */
export function registerBrandAssetRoutes(app: FastifyInstance, deps: { db: SqlDatabase }): void {
  registerRoute(app, brandLogoRoute, async (request, reply) => {
    const sha256 = paramOf(request.params).slice(0, 64);
    const png = await findLogo(deps.db, sha256);
    if (!png) throw new HallmarkError('NOT_FOUND', 'No such logo.');
    return immutable(reply, 'image/png').send(png);
  });

  registerRoute(app, brandThemeRoute, async (request, reply) => {
    const [background, text] = paramOf(request.params)
      .slice(0, -'.css'.length)
      .split('-')
      .map((hex) => `#${hex}`) as [string, string];
    if (contrastRatio(background, text) < minimumContrast) throw new HallmarkError('NOT_FOUND', 'No such theme.');
    return immutable(reply, 'text/css; charset=utf-8').send(
      `.brand{background:${background};color:${text};border-color:${text}}\n`,
    );
  });
}
