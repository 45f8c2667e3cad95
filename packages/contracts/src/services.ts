/** The services that answer over the bus. The gateway calls them; they do not call the gateway. */
export const backendServices = ['code-service', 'verify-service', 'auction-service', 'compliance-service'] as const;
export type BackendService = (typeof backendServices)[number];

export const allServices = ['gateway', ...backendServices] as const;
export type ServiceName = (typeof allServices)[number];

export function isBackendService(value: string): value is BackendService {
  return (backendServices as readonly string[]).includes(value);
}

/** Subjects broadcast to every replica (not kept): each invalidates a cache the moment something is revoked. */
export const broadcasts = {
  /** `{ keyId }`: gateways drop the key from their authentication cache. */
  apiKeyRevoked: 'auth.api-key-revoked',
  /** `{ kid }`: verifiers and gateways drop the public key. */
  publicKeyRevoked: 'keys.public-key-revoked',
  /** `{ kid }`: a public key was registered (or registered again after its revocation); verifiers drop what they remembered of it. */
  publicKeyRegistered: 'keys.public-key-registered',
  /** `{ kid, accountId, environment }`: a signing key was made or rotated; gateways republish the key set, signers drop the owner's cached active key. */
  signingKeyAdded: 'keys.signing-key-added',
  /** `{ accountId, environment }`: an account's compliance config changed; verifiers drop their copy. */
  complianceConfigChanged: 'compliance.config-changed',
  /** `{ reportId, environment, gtin, serial, ownerAccountId, reason, confirmedAt }`: an owner confirmed a report; verifiers block the code. */
  codeBlocked: 'codes.code-blocked',
  /** `{ reportId, environment, gtin, serial, ownerAccountId }`: an owner lifted the block of a confirmed report; verifiers drop it and read their blocks again. */
  codeBlockLifted: 'codes.code-block-lifted',
  /** `{ accountId, environment }`: a block was added to or removed from the blocklist; verifiers reload it. */
  blocklistChanged: 'codes.blocklist-changed',
  /** `{ gtin?, prefix? }`: who may sign a GTIN changed; verifiers drop their copies of its codes and gateways republish the key set. */
  gtinOwnershipChanged: 'gtins.ownership-changed',
  /** `{ accountId, environment }`: an account's branding (name, colours, logo) changed; verifiers drop the issuers they remembered. */
  brandingChanged: 'accounts.branding-changed',
} as const;
