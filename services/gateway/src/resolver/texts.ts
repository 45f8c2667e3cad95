/**
 * Every word the resolver pages show, in one place so other languages can follow: add a locale
 * here with the same keys. English only for now; dates are already formatted per the viewer's
 * Accept-Language.
 */
export const english = {
  siteName: 'Hallmark verification',
  verdict: {
    authentic: {
      headline: 'Authentic product',
      summary: 'This code’s signature checks out.',
      action:
        'The code is genuine. A label can be copied, so if the product, its packaging or the seller looks wrong, buy elsewhere and tell the brand.',
    },
    suspicious: {
      headline: 'Suspicious: check before you use it',
      summary: 'The code’s signature is genuine, but how it has been scanned is unusual.',
      action:
        'Review it carefully: buy only from authorised sellers, compare the packaging with the brand’s, and report it if anything looks wrong.',
    },
    counterfeit: {
      headline: 'Counterfeit: do not use',
      summary: 'Its signature does not match a code issued here.',
      /** A genuine signature on a code the brand marked as counterfeit (its blocklist, a confirmed report). */
      listedSummary: 'Its signature is genuine, but the brand has marked this code as counterfeit: see why below.',
      action: 'Do not use or sell this product. Keep it, its packaging and your receipt, tell the seller, and report it below.',
    },
  },
  /** A test key's code: sandbox data, never a verdict (the headline is labels.testCode). */
  testCode: {
    summary: 'It was made with a test key, in Hallmark’s sandbox: it says nothing about a real product.',
    expired: 'It expired 24 hours after it was made, as every test code does.',
    action:
      'Do not buy or sell anything on the strength of this page. Ask the seller for the product’s real label and check that one.',
  },
  /** Who issued a code whose signature checks out: only ever the account that owns its GTIN. */
  issuedBy: (name: string) => `This code was issued by ${name}, who owns its GTIN, and its signature checks out.`,
  registeredAs: (displayName: string, accountName: string) => `${displayName} (registered as ${accountName})`,
  /** A code the operator signed because no account owns its GTIN: no brand is named. */
  issuedByOperator:
    'This code’s signature checks out, but no brand has registered its GTIN here: it was signed by the operator of this service, not by a brand.',
  labels: {
    product: 'Product',
    serial: 'Serial number',
    batch: 'Batch',
    expiry: 'Expiry date',
    gtin: 'GTIN',
    scans: 'Times scanned',
    verifiedAt: 'Verified',
    whatToDo: 'What to do',
    whyWarning: 'Why we are cautious',
    unnamedProduct: 'Unnamed product',
    testCode: 'This is a test code: it is not a real product.',
    brandConfirmed: 'The brand confirmed a report that this code is on counterfeit goods',
    issuedBy: 'Issued by',
    gtinOwner: 'GTIN registered to',
    noBrand: 'No brand (signed by the service operator)',
    logo: (name: string) => `${name} logo`,
  },
  risk: {
    EXCESSIVE_SCANS: 'This code has been scanned far more often than a single product would be.',
    GEOGRAPHIC_IMPOSSIBILITY: 'It was scanned in places too far apart for the time between scans.',
    KNOWN_COUNTERFEIT_PATTERN:
      'It matches a known counterfeit pattern (the brand confirmed a report of it, or it is copied onto many labels).',
    EXPIRED_CODE: 'The code has expired.',
  } as Record<string, string>,
  report: {
    heading: 'Report this product',
    intro: 'Tell the brand what you saw. Your report goes to them for review; we store no personal data with it.',
    reasonLabel: 'What did you notice? (optional)',
    submit: 'Send report',
    thanksTitle: 'Thank you for your report',
    thanks: 'The brand will review it. Keep the product and its packaging in case they contact the seller.',
    unknownTitle: 'We could not file this report',
    unknown:
      'This code does not match one the brand issued, so there is no brand to send it to. Keep the product and tell the seller.',
    crossSiteTitle: 'Send your report from the product’s page',
    crossSite:
      'This report came from another website, not from the page of the code you scanned, so it was not sent. Scan the code again and use the form on its page.',
  },
  auction: {
    kicker: 'Registered object',
    category: 'Category',
    serial: 'Service serial',
    security: 'Security level',
    registered: 'Registered',
    history: 'Provenance',
    recorded: 'Recorded',
    events: (count: number) => `${count} recorded ${count === 1 ? 'event' : 'events'}`,
    chainIntact: 'History intact: every record links to the one before.',
    chainBroken: 'History altered: the records no longer link up.',
    latestEvent: 'Latest event',
    owner: 'Current owner',
    /** What the photos are, never more: photo-bound only when every required angle has a photo held. */
    photos: (binding: string, counts?: { bound: number; required: number }): string => {
      const of = counts ? ` ${counts.bound} of ${counts.required} angles` : '';
      if (binding === 'invalid') return `A bound reference photo is no longer held${of ? `:${of}` : ''}; not photo-bound.`;
      if (binding === 'valid' && (!counts || counts.bound >= counts.required)) {
        return `Photo-bound: a reference photo at each${counts ? ` of the ${counts.required}` : ''} required angle${counts ? 's' : ''}.`;
      }
      if (counts?.bound === 0) return `No reference photos yet (0 of ${counts.required} angles); not photo-bound.`;
      return `Reference photos:${of || ' incomplete'}; not photo-bound until every required angle has one.`;
    },
    photosLabel: 'Reference photos',
    summary: {
      authentic: 'The tag’s signature checks out and its recorded history is intact.',
      suspicious: 'The tag’s signature checks out, but something below does not hold.',
      counterfeit: 'The tag’s signature does not match the one issued for this object.',
    } as Record<string, string>,
    /** A genuine signature on a label the house marked as counterfeit (its blocklist, a confirmed report). */
    listedSummary: 'The tag’s signature checks out, but the auction house has marked this label as counterfeit: see why below.',
    /** An object registered with a test key: the headline is labels.testCode, as on a test code's page. */
    test: {
      summary: 'It was registered with a test key, in Hallmark’s sandbox: this record says nothing about a real object.',
      expired: 'Its test code expired 24 hours after registration, as every test code does.',
      action:
        'Do not buy or sell anything on the strength of this page. Ask the seller for the object’s real Hallmark label and check that one.',
    },
  },
  error: {
    badLinkTitle: 'This code could not be read',
    badLink: 'The address does not hold a complete product code.',
    tryAgain: 'Scan the code again, and make sure the whole code is in view.',
    busyTitle: 'Too many requests',
    busy: 'Please wait a moment and try again.',
    unavailableTitle: 'Verification is unavailable right now',
    unavailable: 'Please try again in a minute.',
    embeddedTitle: 'Open this link to check the product',
    embedded:
      'This page was loaded inside another page (as an image, a frame or a script) or ahead of time. A product is only checked when its link is opened.',
  },
  footer: 'Checked by Hallmark against the Ed25519 signing keys it publishes at /.well-known/jwks.json.',
} as const;

export type Texts = typeof english;
