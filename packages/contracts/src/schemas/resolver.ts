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
  /**
   * True when the link's signature checked out under a key that could have signed it (a stored
   * code's, or the GTIN signer's own for a code made elsewhere). False for a forged link, with
   * nothing else (no environment, product or result) whether or not its serial was ever issued.
   */
  codeFound: Type.Boolean(),
  environment: Type.Union([Type.Literal('live'), Type.Literal('test'), Type.Null()]),
  productName: Type.Union([Type.String(), Type.Null()]),
  result: Type.Union([VerificationResult, Type.Null()]),
  /**
   * The account that owns the GTIN (its live claim), with its branding: the code's issuer when the
   * signature checked out, else only the GTIN's owner; null when no account owns it; absent for a
   * test key's code. Optional so an older verify-service's answer still reads.
   */
  issuer: Type.Optional(Type.Union([ResolvedIssuer, Type.Null()])),
});
export type ResolvedScan = Static<typeof ResolvedScan>;
