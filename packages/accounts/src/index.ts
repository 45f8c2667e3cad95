export {
  type AccountLogDeps,
  accountView,
  type BootstrapOutcome,
  ensureOperator,
  provisionAccount,
  recordApiKeyCreation,
  recordApiKeyRevocation,
  recordApiKeyRotation,
  recordOperatorKeyIssue,
} from './account-log.ts';
export { type Account, findAccount, findOperatorAccount, listAccounts } from './account-store.ts';
export { environmentOfSecret, hashApiKeySecret, isWellFormedSecret, newApiKeySecret } from './api-key-secret.ts';
export {
  type ApiKeyRecord,
  type ApiKeyWithAccount,
  decideApiKeyRevocation,
  findApiKeyByHash,
  findApiKeyById,
  type KeyRevoked,
  listApiKeysOfAccount,
  lockActingKey,
  refuseUnusableKey,
  writeKeyRevoked,
} from './api-key-store.ts';
export {
  apiKeyStatus,
  apiKeyView,
  assertWellFormedSecret,
  decideApiKeyCreation,
  decideOperatorKeyIssue,
  environmentFor,
  type KeyIssued,
  maxActiveApiKeys,
  restrictionsViewOf,
  throwRefusal,
  writeKeyIssued,
} from './api-keys.ts';
export type { AuthenticatedKey } from './authenticated-key.ts';
export {
  type BrandingChange,
  bandColours,
  brandingView,
  contrastRatio,
  defaultTextColour,
  findBranding,
  findGtinIssuer,
  findLogo,
  findStoredColours,
  minimumContrast,
  relativeLuminance,
  writeBranding,
} from './branding.ts';
export {
  type CachedTable,
  type CacheEpochs,
  defaultEpochPollMs,
  fixedCacheEpochs,
  watchCacheEpochs,
} from './cache-epochs.ts';
export {
  type ConsoleSession,
  deleteConsoleSession,
  deleteConsoleSessionByToken,
  deleteConsoleSessionsOfKey,
  deleteEndedConsoleSession,
  deleteEndedConsoleSessions,
  findLiveConsoleSession,
  hashSessionToken,
  insertConsoleSession,
  isSessionLive,
  isWellFormedSessionToken,
  newSessionToken,
  sessionIdleMs,
  sessionLifetimeMs,
  sessionTimesAt,
  sessionTouchIntervalMs,
  setConsoleSessionEnvironment,
  touchConsoleSession,
  touchedIdleExpiry,
} from './console-sessions.ts';
export {
  type AccountKeys,
  type ApiKeyCommand,
  type ApiKeyEvent,
  type DomainError as KeyRefusal,
  decidePublicKeyChange,
  decideSigningKeyRotation,
} from './domain/api-keys.ts';
export {
  type CallerEnvironmentRefusal,
  decideGrantEnvironment,
  decideLiveOnlyAction,
  type GtinClaimReach,
  gtinClaimReach,
} from './domain/caller-environment.ts';
export {
  decideKeyRotation,
  type KeyRotationEvent,
  type RotationGraceSeconds,
  rotationGraceSeconds,
} from './domain/key-rotation.ts';
export { parseExpiresIn } from './expires-in.ts';
export { changedClaimOf, createGtinChanges, type GtinChanges } from './gtin-changes.ts';
export {
  findClaimsGivingWay,
  findGtinClaim,
  findGtinSigner,
  givesWayTo,
  gtinClaimsLock,
  gtinClaimView,
  gtinSignerSql,
  insertGtinClaim,
  listActiveGtinClaims,
  listGtinClaims,
  newGtinClaim,
  revokeGtinClaim,
} from './gtin-claim-store.ts';
export { createGtinIssuers, type GtinIssuers } from './gtin-issuers.ts';
export { claimCovers, claimsOverlap, claimValuesCovering, environmentsCovered, type GtinClaimTarget } from './gtin-ownership.ts';
export { createGtinSigners, type GtinSigner, type GtinSigners } from './gtin-signers.ts';
export { findKeysLastUsed, writeKeysLastUsed } from './key-last-used.ts';
export { listKeys } from './key-listing.ts';
export {
  createSigningKeyring,
  createVerificationKeys,
  maxActivePublicKeys,
  maxSigningKeysPerDay,
  type PublicKeyEntry,
  type SigningKey,
  type SigningKeyring,
  type VerificationKeys,
} from './keyring.ts';
export { migrateAccounts } from './migrate.ts';
export { effectiveScopes, holdsScope, scopesBeyond } from './scope-rules.ts';
export { type TierLimits, testKeyRequestsPerDay, tierLimits } from './tiers.ts';
