// What the console reads from the API (packages/contracts holds the schemas; these are the fields used).

export type Environment = 'live' | 'test';
export type Verdict = 'AUTHENTIC' | 'SUSPICIOUS' | 'COUNTERFEIT';

export interface SessionView {
  session: { id: string; environment: Environment; createdAt: string; expiresAt: string; idleExpiresAt: string };
  key: {
    id: string;
    name: string;
    environment: Environment;
    scopes: string[];
    isOperator: boolean;
    /** The GTINs the key is restricted to (pages that name none answer KEY_RESTRICTED); null or absent: none. */
    restrictions?: { gtins: string[] } | null;
  };
  account: { id: string; name: string; tier: string };
  environments: Environment[];
}

export interface Pagination {
  limit: number;
  nextCursor: string | null;
  hasMore: boolean;
}

export interface ApiKeyView {
  id: string;
  type: 'api';
  name: string;
  environment: Environment;
  scopes: string[];
  prefix: string;
  status: 'active' | 'expired' | 'revoked';
  /** The API key that created it (null: the account's first key, or the operator's command line). */
  createdBy?: string | null;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt?: string | null;
  /** The GTINs the key is restricted to; null (or absent, from an older gateway): not restricted. */
  restrictions?: { gtins: string[] } | null;
}

export interface CreatedApiKey extends ApiKeyView {
  secret: string;
  replaced?: { id: string; expiresAt: string };
}

export interface VerificationKeyView {
  id: string;
  type: 'public' | 'signing';
  name: string | null;
  environment: Environment;
  algorithm: 'Ed25519';
  publicKey: string;
  status: 'active' | 'retired' | 'revoked';
  createdAt: string;
  retiredAt: string | null;
  revokedAt: string | null;
}

export interface KeyList<K> {
  keys: K[];
  pagination: Pagination;
}

export interface ScanView {
  scanId: string;
  scannedAt: string;
  gtin: string;
  serial: string;
  batch: string | null;
  verdict: Verdict;
  riskIndicators: string[];
  scanNumber: number;
  country: string | null;
  reported: boolean;
  /** Who asked: the account's own keys, the public page, or another account (absent from gateways before 2026-12-05). */
  scannedBy?: 'owner' | 'public' | 'other';
  /** The journey from the code's previous located scan (added with the console; absent from older gateways). */
  travelKm?: number | null;
  travelKmh?: number | null;
}

export interface ScanAggregates {
  from: string;
  to: string;
  buckets: Array<{ start: string; counts: Record<string, number> }>;
}

export type ReportStatus = 'pending' | 'confirmed' | 'dismissed' | 'lifted';

export interface CodeReportView {
  reportId: string;
  status: ReportStatus;
  source: 'api' | 'resolver';
  gtin: string;
  serial: string;
  assetId: string;
  reason: string | null;
  reportedAt: string;
  decidedAt: string | null;
  blockReason: string | null;
  liftedAt: string | null;
  liftReason: string | null;
  dismissReason: string | null;
}

export interface CodeSummary {
  assetId: string;
  gtin: string;
  serialNumber: string;
  batchNumber: string | null;
  expiryDate: string | null;
  url: string;
  createdAt: string;
  metadata: Record<string, unknown> | null;
}

export interface CodeDetail extends CodeSummary {
  scans: { count: number; firstAt: string | null; lastAt: string | null; flags: string[] };
  reported: boolean;
  reportStatus?: 'pending' | 'confirmed' | 'dismissed' | 'lifted' | null;
  blocked: {
    blockId: string;
    status: string;
    reason: string | null;
    kind?: string;
    serialFrom?: string;
    serialTo?: string;
  } | null;
}

/** The lists added for the console page with `{ data, nextCursor }`. */
/** A GTIN or GS1 Company Prefix the account may sign codes for (GET /gtins). */
export interface GtinClaimView {
  id: string;
  kind: 'gtin' | 'prefix';
  value: string;
  status: 'active' | 'revoked';
}

export interface DataPage<T> {
  data: T[];
  nextCursor: string | null;
}

export interface GeneratedCode {
  url: string;
  gtin: string;
  serial: string;
  batch?: string;
  expiryDate?: string;
  assetId: string;
  createdAt: string;
}

export type BatchItemResult =
  | { index: number; code: GeneratedCode }
  | { index: number; error: { code: string; message: string; details?: Record<string, unknown> } };

export interface Usage {
  accountId: string;
  environment: Environment;
  tier: string;
  day: string;
  resetsAt: string;
  quotas: Array<{ name: string; used: number; limit: number | null }>;
  rateLimit: { limit: number; windowSeconds: number };
}

export interface KeyUsage {
  keyId: string;
  name: string;
  requestsToday: number;
  requestsThisMinute: number;
  lastUsedAt: string | null;
}

export interface WebhookEndpointView {
  id: string;
  url: string;
  description: string;
  eventTypes: string[];
  status: 'enabled' | 'disabled';
  /** `gone` (the endpoint answered 410), `failing` (5 days of failures) or `disabled` (by API). */
  disabledReason: string | null;
  failingSince: string | null;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  /** The API keys that made the endpoint and last changed it (null: not recorded, or not changed). */
  createdBy: string | null;
  changedBy: string | null;
}

export interface CreatedWebhookEndpoint extends WebhookEndpointView {
  secret: string;
}

export interface WebhookMessageView {
  id: string;
  eventType: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: string | null;
  lastResponseCode: number | null;
  createdAt: string;
  deliveredAt: string | null;
}

/** A blocklist entry (GET /blocklist): one code, or a serial range of a GTIN. */
export type BlockKind = 'counterfeit' | 'withdrawn';

export interface BlockView {
  blockId: string;
  gtin: string;
  serialFrom: string;
  serialTo: string;
  kind: BlockKind;
  reason: string | null;
  status: 'active' | 'removed';
  createdAt: string;
  removedAt: string | null;
}
