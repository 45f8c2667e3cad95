import { type Static, Type } from '@sinclair/typebox';
import { ResolvedIssuer } from './branding.ts';
import { VerificationResult } from './codes.ts';

export const ResolverLinkParam = Type.Object({
  linkPath: Type.String({
    description: 'The rest of the GS1 Digital Link path after /01/: the GTIN, then /21/<serial>, /10/<batch> in either order',
  }),
});

export const ResolverReportForm = Type.Object({
  link: Type.String({ maxLength: 2048, description: 'the scanned link, as the page put it in the form' }),
  reason: Type.Optional(Type.String({ maxLength: 1000 })),
});

export const HtmlPage = Type.String({ description: 'An HTML page' });

const linkParam = (description: string) =>
  Type.Union([Type.String({ maxLength: 2048 }), Type.Array(Type.String({ maxLength: 2048 }), { maxItems: 8 })], { description });

export const ResolverQuery = Type.Object(
  {
    // Strings or repeated: the link's own syntax check (packages/gs1, parseDigitalLink) answers a
    // repeated or malformed AI with 400 INVALID_URL and its reason, as it does at every other reader.
    sig: Type.Optional(linkParam('The signature (base64url)')),
    '8030': Type.Optional(linkParam('GS1 AI 8030: the signature, as GS1 names it')),
    '17': Type.Optional(linkParam('GS1 AI 17: expiry date YYMMDD')),
    linkType: Type.Optional(Type.String({ maxLength: 100, description: '`linkset` for the RFC 9264 linkset' })),
  },
  { additionalProperties: true },
);

/** What verify-service answers for a scan on the public resolver. */
export const ResolvedScan = Type.Object({
  /** False when no code was ever issued for this GTIN and serial (in either environment). */
  codeFound: Type.Boolean(),
  environment: Type.Union([Type.Literal('live'), Type.Literal('test'), Type.Null()]),
  productName: Type.Union([Type.String(), Type.Null()]),
  result: Type.Union([VerificationResult, Type.Null()]),
  /**
   * The account that owns the code's GTIN, with its branding: null when no account owns it (the
   * operator signed it) or no code was found. Optional so an older verify-service's answer still reads.
   */
  issuer: Type.Optional(Type.Union([ResolvedIssuer, Type.Null()])),
});
export type ResolvedScan = Static<typeof ResolvedScan>;
