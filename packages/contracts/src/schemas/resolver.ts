import { type Static, Type } from '@sinclair/typebox';
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

export const ResolverQuery = Type.Object(
  {
    sig: Type.Optional(Type.String({ maxLength: 200 })),
    '8030': Type.Optional(Type.String({ maxLength: 200 })),
    '17': Type.Optional(Type.String({ maxLength: 20 })),
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
});
export type ResolvedScan = Static<typeof ResolvedScan>;
