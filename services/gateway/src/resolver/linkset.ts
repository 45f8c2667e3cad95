import type { DigitalLink } from '@hallmark/gs1';

/**
 * The RFC 9264 linkset of a code, as GS1 resolvers publish them: the anchor is the item's identity
 * (GTIN, serial, batch; no signature), its links typed with GS1 link types.
 */
export function linksetOf(origin: string, link: DigitalLink, scannedUrl: string) {
  const anchor = `${origin}/01/${link.gtin}${link.serial !== undefined ? `/21/${encodeURIComponent(link.serial)}` : ''}${
    link.batch !== undefined ? `/10/${encodeURIComponent(link.batch)}` : ''
  }`;
  const page = { href: scannedUrl, title: 'Verification of this item', type: 'text/html', hreflang: ['en'] };
  return {
    linkset: [
      {
        anchor,
        'https://gs1.org/voc/defaultLink': [page],
        'https://gs1.org/voc/pip': [page],
        'https://gs1.org/voc/verificationService': [
          { href: `${origin}/api/v1/code/verify`, title: 'Verification API (POST, API key)', type: 'application/json' },
        ],
      },
    ],
  };
}

/** What /.well-known/gs1resolver says about this resolver (GS1-Conformant Resolver description). */
export function resolverDescription(origin: string) {
  return {
    name: 'Hallmark resolver',
    resolverRoot: origin,
    supportedPrimaryKeys: ['gtin'],
    supportedContextValuesEnumerated: [],
    linkTypeDefaultCanBeLinkset: true,
    supportedLinkType: [{ namespace: 'https://gs1.org/voc/', prefix: 'gs1:', profile: 'https://gs1.org/voc/?show=linktypes' }],
    validatingSignatures: { algorithm: 'Ed25519', parameter: 'sig', keys: `${origin}/.well-known/jwks.json` },
  };
}
