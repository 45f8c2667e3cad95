import {
  type BrandingChange,
  contrastRatio,
  findBranding,
  findStoredColours,
  minimumContrast,
  writeBranding,
} from '@hallmark/accounts';
import type { Bus } from '@hallmark/bus';
import {
  type BrandingInput,
  type BrandingView,
  broadcasts,
  deleteBrandingLogoRoute,
  getBrandingRoute,
  HallmarkError,
  isPrintableText,
  type Principal,
  updateBrandingRoute,
  uploadBrandingLogoRoute,
} from '@hallmark/contracts';
import type { EventStore } from '@hallmark/event-store';
import { accountStream } from '@hallmark/provenance';
import type { SqlDatabase } from '@hallmark/sql';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/request-auth.ts';
import { checkLogo, maxLogoBytes } from '../logo-check.ts';
import { registerRoute } from '../route-registry.ts';
import type { UploadSlots } from '../upload-slots.ts';

const logoTypes = ['image/png', 'image/jpeg'] as const;
const mediaTypeOf = (header: string | undefined) => (header ?? '').split(';')[0]?.trim().toLowerCase();
const unsupportedLogoType = () =>
  new HallmarkError('UNSUPPORTED_MEDIA_TYPE', 'Send the logo as the body, with Content-Type image/png or image/jpeg.', {
    accepted: [...logoTypes],
  });

/**
 * Writes a branding change with its audit event (`branding.updated` or `branding.logo-set`) in the
 * account's stream, the row written in the event's transaction (as key-log.ts does for keys): a
 * change is stored with its record or not at all. Without an event store (a gateway built without
 * one, in some tests) the row alone is written. Then verifiers are told to forget the issuers they
 * remember (`accounts.branding-changed`).
 */
async function recordBrandingChange(
  deps: { db: SqlDatabase; eventStore?: EventStore; bus: Bus; clock: () => Date },
  owner: Principal,
  type: 'branding.updated' | 'branding.logo-set' | 'branding.logo-removed',
  data: Record<string, unknown>,
  change: BrandingChange,
): Promise<BrandingView> {
  const view = await writeBrandingChange(deps, owner, type, data, change);
  // The resolver pages of every replica name the brand anew at once (the epoch is the slower path).
  await deps.bus.broadcast(broadcasts.brandingChanged, { accountId: owner.accountId, environment: owner.environment });
  return view;
}

/** The row and its audit event, in one transaction. */
async function writeBrandingChange(
  deps: { db: SqlDatabase; eventStore?: EventStore; clock: () => Date },
  owner: Principal,
  type: 'branding.updated' | 'branding.logo-set' | 'branding.logo-removed',
  data: Record<string, unknown>,
  change: BrandingChange,
): Promise<BrandingView> {
  const now = deps.clock();
  if (!deps.eventStore) return writeBranding(deps.db, owner, change, now);
  let view: BrandingView | undefined;
  await deps.eventStore.append(
    accountStream(owner),
    [{ type, data: { ...data, accountId: owner.accountId, at: now.toISOString() } }],
    {
      expectedVersion: 'any',
      readModels: {
        db: deps.db,
        async write(sql) {
          view = await writeBranding(sql, owner, change, now);
        },
      },
    },
  );
  if (!view) throw new Error(`The ${type} append wrote no branding row.`);
  return view;
}

/**
 * `/account/branding` (GET, PUT) and `/account/branding/logo` (PUT): the brand's name, colours and
 * logo on the resolver page, for the calling key's account and environment only (the key fixes
 * both; nothing in the request names an account). docs/RESOLVER.md, "The brand".
 */
export function registerAccountSettingsRoutes(
  app: FastifyInstance,
  deps: { db: SqlDatabase; eventStore?: EventStore; bus: Bus; clock: () => Date; uploads: UploadSlots },
): void {
  // The logo is the body itself; only these two types are parsed (SVG and the rest are 415).
  app.addContentTypeParser([...logoTypes], { parseAs: 'buffer', bodyLimit: maxLogoBytes }, (_request, body, done) => {
    done(null, body);
  });

  // Before the body is read (and before the gateway's text checks would look at it as text): a logo
  // of any other type is 415 whatever its bytes, once the key and its scope have been checked.
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config?.route !== uploadBrandingLogoRoute) return;
    if (!logoTypes.some((type) => type === mediaTypeOf(request.headers['content-type']))) throw unsupportedLogoType();
  });

  registerRoute(app, getBrandingRoute, async (request) => {
    const view = await findBranding(deps.db, principalOf(request));
    if (!view) throw new HallmarkError('NOT_FOUND', 'The account was not found.');
    return view;
  });

  registerRoute(app, updateBrandingRoute, async (request) => {
    const owner = principalOf(request);
    const body = request.body as BrandingInput;
    // A name with control or direction-override characters could make the page read as something else.
    if (body.displayName && !isPrintableText(body.displayName)) {
      throw new HallmarkError('VALIDATION_ERROR', 'Invalid request: check displayName.', {
        fields: [{ field: 'displayName', in: 'body', message: 'contains control or text-direction characters' }],
      });
    }
    // The page names the account beside a display name that differs ("Acme (registered as Acme
    // Ceramics Ltd)"): a display name that writes such words itself would pass for that check.
    if (body.displayName && /registered\s+as/i.test(body.displayName)) {
      throw new HallmarkError('VALIDATION_ERROR', 'Invalid request: check displayName.', {
        fields: [{ field: 'displayName', in: 'body', message: 'must not contain "registered as", which the page writes itself' }],
      });
    }
    const change: BrandingChange = {};
    if (body.displayName !== undefined) change.displayName = body.displayName === null ? null : body.displayName.trim() || null;
    if (body.primaryColor !== undefined) change.primaryColor = body.primaryColor?.toLowerCase() ?? null;
    if (body.textColor !== undefined) change.textColor = body.textColor?.toLowerCase() ?? null;
    // The pair as it will be: a text colour the brand sets must be legible on its band (WCAG AA).
    const stored = await findStoredColours(deps.db, owner);
    const primary = change.primaryColor !== undefined ? change.primaryColor : stored.primary;
    const text = change.textColor !== undefined ? change.textColor : stored.text;
    if (change.textColor && primary === null) {
      throw new HallmarkError('VALIDATION_ERROR', 'Invalid request: a textColor needs a primaryColor to be read against.', {
        fields: [{ field: 'textColor', in: 'body', message: 'needs a primaryColor' }],
      });
    }
    if (text !== null && primary !== null) {
      const ratio = contrastRatio(primary, text);
      if (ratio < minimumContrast) {
        throw new HallmarkError(
          'VALIDATION_ERROR',
          `Invalid request: text ${text} on ${primary} has a contrast of ${ratio}:1; at least ${minimumContrast}:1 is needed (WCAG AA). Leave textColor out and the page picks black or white.`,
          {
            fields: [
              {
                field: 'textColor',
                in: 'body',
                message: `contrasts ${ratio}:1 with primaryColor; at least ${minimumContrast}:1`,
              },
            ],
            contrastRatio: ratio,
            minimum: minimumContrast,
          },
        );
      }
    }
    return recordBrandingChange(deps, owner, 'branding.updated', { ...change }, change);
  });

  // The logo's body (at most 512 KiB) is read by its parser before the handler: the slot bounds its
  // decoding and re-encoding. A logo whose client left while it waited for a slot is not decoded.
  registerRoute(app, uploadBrandingLogoRoute, (request, reply) =>
    deps.uploads.run(request, reply, async () => {
      const declared = logoTypes.find((type) => type === mediaTypeOf(request.headers['content-type']));
      if (!declared || !Buffer.isBuffer(request.body)) throw unsupportedLogoType();
      const logo = await checkLogo(request.body, declared);
      return recordBrandingChange(
        deps,
        principalOf(request),
        'branding.logo-set',
        { sha256: logo.sha256, width: logo.width, height: logo.height, bytes: logo.png.length },
        { logo: { sha256: logo.sha256, png: logo.png, width: logo.width, height: logo.height } },
      );
    }),
  );

  registerRoute(app, deleteBrandingLogoRoute, async (request) => {
    const owner = principalOf(request);
    const current = await findBranding(deps.db, owner);
    // Nothing to remove: nothing to record.
    if (current && current.logo === null) return current;
    return recordBrandingChange(deps, owner, 'branding.logo-removed', { sha256: current?.logo?.sha256 ?? null }, { logo: null });
  });
}
