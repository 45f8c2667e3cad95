import { type Static, Type } from '@sinclair/typebox';
import { TrustProxySetting } from './trust-proxy.ts';

const publicUrl = (description: string) => Type.String({ pattern: '^https?://[^/?#]+$', description });

export const GatewayConfig = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65_535, default: 8080, description: 'TCP port of the HTTP API' }),
  HALLMARK_HOST: Type.String({ default: '0.0.0.0', description: 'address to listen on' }),
  HALLMARK_BODY_LIMIT_BYTES: Type.Integer({
    minimum: 1_024,
    maximum: 64 * 1024 * 1024,
    default: 1024 * 1024,
    description: 'largest JSON body accepted, in bytes',
  }),
  HALLMARK_UPLOAD_LIMIT_BYTES: Type.Integer({
    minimum: 1_024,
    maximum: 256 * 1024 * 1024,
    default: 20 * 1024 * 1024,
    description: 'largest uploaded file accepted, in bytes',
  }),
  HALLMARK_UPLOADS_AT_ONCE: Type.Integer({
    minimum: 1,
    maximum: 256,
    default: 4,
    description:
      'photo uploads a gateway holds in memory at once (each up to HALLMARK_UPLOAD_LIMIT_BYTES); as many more wait, beyond that 503 with Retry-After',
  }),
  HALLMARK_LARGE_BODIES_AT_ONCE: Type.Integer({
    minimum: 1,
    maximum: 1_024,
    default: 8,
    description:
      'request bodies over 1 MiB (batches with metadata) a gateway reads and works on at once, one account a quarter of them at most (large-bodies.ts); beyond that 503, or 429 for the account, with Retry-After',
  }),
  HALLMARK_LARGE_BODY_BYTES_PER_SECOND: Type.Integer({
    minimum: 1_024,
    maximum: 1024 * 1024 * 1024,
    default: 1024 * 1024,
    description:
      'bytes of request bodies over 1 MiB one account may send a gateway a second on average (16 MiB at once); beyond that 429 with Retry-After',
  }),
  HALLMARK_REQUESTS_PER_TURN: Type.Integer({
    minimum: 0,
    maximum: 10_000,
    default: 16,
    description:
      'requests whose work (after parsing and routing) starts in one turn of the event loop, after its I/O; the rest wait for the next turn (0: each runs as it arrives). Shortens the loop’s stalls under load and sends a turn’s answers together',
  }),
  HALLMARK_HTTP_HEADERS_TIMEOUT_MS: Type.Integer({
    minimum: 1_000,
    maximum: 600_000,
    default: 15_000,
    description: 'a client must send all its request headers within this many ms, or the connection is closed (408)',
  }),
  HALLMARK_HTTP_REQUEST_TIMEOUT_MS: Type.Integer({
    minimum: 1_000,
    maximum: 3_600_000,
    default: 120_000,
    description: 'a client must send its whole request, body included, within this many ms, or the connection is closed (408)',
  }),
  HALLMARK_HTTP_KEEP_ALIVE_TIMEOUT_MS: Type.Integer({
    minimum: 1_000,
    maximum: 600_000,
    default: 72_000,
    description: 'an idle keep-alive connection is closed after this many ms (longer than a load balancer’s idle timeout)',
  }),
  HALLMARK_PUBLIC_RATE_LIMIT: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    default: 10,
    description: 'requests per second one client address may make to the public (keyless) verification routes',
  }),
  HALLMARK_AUTH_FAILURES_PER_MINUTE: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 20,
    description:
      'failed authentications (unknown, malformed, revoked or expired key) one client address may make per minute; beyond, its requests with a bad key get 429',
  }),
  HALLMARK_RESOLVER_RELOAD_SECONDS: Type.Integer({
    minimum: 0,
    maximum: 3_600,
    default: 10,
    description:
      'a resolver page reloaded by the same client within this many seconds shows the same scan instead of counting a new one',
  }),
  HALLMARK_TRUST_PROXY: TrustProxySetting,
  HALLMARK_PUBLIC_URL: Type.Optional(
    publicUrl(
      'scheme and host clients reach the gateway at, without a path (e.g. https://id.brand.com); absolute links in answers use it, never the Host header',
    ),
  ),
  HALLMARK_CONSOLE_URL: Type.Optional(
    Type.String({ pattern: '^https?://[^\\s]+$', description: 'where the web console is deployed; GET / points to it' }),
  ),
  // Shared with code- and auction-service: the public URL defaults to it.
  HALLMARK_RESOLVER_URL: Type.Optional(publicUrl('scheme and host of the resolver in generated links, without a path')),
  HALLMARK_REPORT_LIMIT_PER_ACCOUNT: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 100,
    description: 'counterfeit reports (POST /code/report) one account may send per hour, across its keys',
  }),
  HALLMARK_REPORT_LIMIT_PER_ADDRESS: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 10,
    description: 'reports one client address may send per hour from the resolver page’s form',
  }),
  HALLMARK_RESTRICTED_KEY_MAX_ACTIVE_BLOCKS: Type.Integer({
    minimum: 0,
    maximum: 1_000_000,
    default: 1_000,
    description:
      'active blocks one API key restricted to some GTINs may hold (its own, still active), within the account’s; a leaked one cannot fill the account’s',
  }),
  HALLMARK_RESTRICTED_KEY_MAX_LINKS: Type.Integer({
    minimum: 0,
    maximum: 1_000_000,
    default: 1_000,
    description:
      'links one API key restricted to some GTINs may have made (those still there), within the account’s 100,000; a leaked one cannot fill the account’s',
  }),
  HALLMARK_IDEMPOTENCY_LEASE_MS: Type.Integer({
    minimum: 100,
    maximum: 3_600_000,
    default: 30_000,
    description:
      'how long a request with an Idempotency-Key holds its key without renewing it; a running attempt renews it every third of this, and a claim left by a crashed attempt lapses after this, then a retry runs again',
  }),
  HALLMARK_BOOTSTRAP_KEY: Type.Optional(
    Type.String({
      pattern: '^svc_(live|test)_[0-9a-f]{64}$',
      description: 'svc_live_<64 lower-case hex>: the operator key to ensure at start',
    }),
  ),
});
export type GatewayConfig = Static<typeof GatewayConfig>;
