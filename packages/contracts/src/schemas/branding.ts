import { type Static, Type } from '@sinclair/typebox';

/** A colour as `#rrggbb` (lower or upper case); answers give it in lower case. */
export const HexColour = Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', description: 'a colour as #rrggbb' });

/**
 * `PUT /account/branding`: what the resolver page shows of the brand (docs/RESOLVER.md, "The
 * brand"). Every field is optional; a field sent as null clears it, one left out keeps its value.
 */
export const BrandingInput = Type.Object(
  {
    displayName: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 80 }), Type.Null()], {
        description: 'the brand’s name on the page; default: the account’s name',
      }),
    ),
    primaryColor: Type.Optional(
      Type.Union([HexColour, Type.Null()], { description: 'background of the brand’s band at the top of the page' }),
    ),
    textColor: Type.Optional(
      Type.Union([HexColour, Type.Null()], {
        description:
          'text on the band; must have a WCAG contrast of at least 4.5:1 with primaryColor (else 400); default: black or white, whichever contrasts more',
      }),
    ),
  },
  { additionalProperties: false },
);
export type BrandingInput = Static<typeof BrandingInput>;

export const BrandingLogo = Type.Object({
  url: Type.String({ description: 'where the page loads it: this resolver’s own origin, /resolver/logos/<sha256>.png' }),
  sha256: Type.String({ description: 'SHA-256 of the stored (re-encoded) PNG' }),
  width: Type.Integer(),
  height: Type.Integer(),
  bytes: Type.Integer({ description: 'size of the stored PNG' }),
});

export const BrandingView = Type.Object({
  displayName: Type.Union([Type.String(), Type.Null()]),
  /** What the page shows: displayName, else the account's name. */
  shownName: Type.String({ description: 'the name the page shows: displayName, else the account’s name' }),
  primaryColor: Type.Union([Type.String(), Type.Null()]),
  textColor: Type.Union([Type.String(), Type.Null()], {
    description: 'the text colour the page uses on the band (the one set, or the one chosen), null without a primaryColor',
  }),
  contrastRatio: Type.Union([Type.Number(), Type.Null()], { description: 'WCAG contrast of textColor on primaryColor' }),
  logo: Type.Union([BrandingLogo, Type.Null()]),
  updatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
export type BrandingView = Static<typeof BrandingView>;

export const BrandLogoParam = Type.Object({
  file: Type.String({ pattern: '^[0-9a-f]{64}\\.png$', maxLength: 68, description: '<sha256>.png' }),
});

export const BrandThemeParam = Type.Object({
  file: Type.String({
    pattern: '^[0-9a-f]{6}-[0-9a-f]{6}\\.css$',
    maxLength: 17,
    description: '<background rrggbb>-<text rrggbb>.css',
  }),
});

/**
 * Who issued a scanned code, as the resolver page names it: the account that owns the code's GTIN
 * (its claim), with its branding. Absent when no account owns the GTIN (the operator signed it).
 */
export const ResolvedIssuer = Type.Object({
  accountId: Type.String(),
  name: Type.String({ description: 'the brand’s display name, else the account’s name' }),
  accountName: Type.Optional(
    Type.String({
      description:
        'the account’s name as the operator registered it: the page names it beside a display name that differs (a display name is the brand’s own words, which could be another brand’s)',
    }),
  ),
  primaryColor: Type.Union([Type.String(), Type.Null()]),
  textColor: Type.Union([Type.String(), Type.Null()]),
  logo: Type.Union([Type.Object({ sha256: Type.String(), width: Type.Integer(), height: Type.Integer() }), Type.Null()]),
});
export type ResolvedIssuer = Static<typeof ResolvedIssuer>;
