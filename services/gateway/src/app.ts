import { randomUUID } from 'node:crypto';
import multipart from '@fastify/multipart';
import { type AuthenticatedKey, createVerificationKeys, watchCacheEpochs } from '@hallmark/accounts';
import type { BlobStore } from '@hallmark/blob-store';
import type { Bus } from '@hallmark/bus';
import type { Cache } from '@hallmark/cache';
import {
  broadcasts,
  generateCodeBatchRoute,
  HallmarkError,
  recordQuotaThresholdRpc,
  routerPathOf,
  routes,
} from '@hallmark/contracts';
import type { EventStore } from '@hallmark/event-store';
import { isDependencyOutage, type Logger, outageAsUnavailable, type ReadinessChecks } from '@hallmark/runtime';
import type { SqlDatabase } from '@hallmark/sql';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest, LogController } from 'fastify';
import { createAllowedMethods } from './allowed-methods.ts';
import { createAuthenticator, refusalOfStoppedKey } from './auth/authenticator.ts';
import { createConsoleSessions } from './auth/console-sessions.ts';
import { createKeyLastUsed } from './auth/key-last-used.ts';
import { installKeyRestrictions } from './auth/key-restrictions.ts';
import { createRateLimiter } from './auth/rate-limiter.ts';
import { createReportLimits } from './auth/report-limits.ts';
import { applyLimitOutcome, installRequestAuth, installUncheckedKey } from './auth/request-auth.ts';
import type { GatewayConfig } from './config.ts';
import { registerConsoleRoutes } from './console/routes.ts';
import { drainOnClose } from './draining.ts';
import { errorEnvelope, toApiError } from './error-envelope.ts';
import { installIdempotency } from './idempotency.ts';
import { hostileClientOptions, installInputLimits, installProtocolRefusals } from './input-limits.ts';
import { installLargeBodyLimits } from './large-bodies.ts';
import { decodedPathOf, originFormOf } from './request-target.ts';
import { createRequestTurns, maxWaitingPerConnection } from './request-turns.ts';
import { registerBrandAssetRoutes } from './resolver/brand-assets.ts';
import {
  prefersHtml,
  registerResolverRoutes,
  resolverErrorPage,
  resolverPageOfUnrouted,
  withResolverHeaders,
} from './resolver/routes.ts';
import { registerAccountSettingsRoutes } from './routes/account.ts';
import { registerAccountRoutes } from './routes/accounts.ts';
import { maxUploadFields, registerAuctionRoutes } from './routes/auction.ts';
import { batchChunksInFlightOf, registerCodeRoutes } from './routes/code.ts';
import { registerCodeListingRoutes } from './routes/codes.ts';
import { registerComplianceRoutes } from './routes/compliance.ts';
import { registerGtinRoutes } from './routes/gtins.ts';
import { registerKeyRoutes } from './routes/keys.ts';
import { registerLinkRoutes } from './routes/links.ts';
import { registerScanRoutes } from './routes/scans.ts';
import { registerSchemaRoutes } from './routes/schemas.ts';
import { registerSessionRoutes } from './routes/sessions.ts';
import { registerSystemRoutes } from './routes/system.ts';
import { registerUsageRoutes } from './routes/usage.ts';
import { registerWebhookRoutes } from './routes/webhooks.ts';
import { registerWellKnownRoutes } from './routes/well-known.ts';
import { createServiceCaller } from './service-call.ts';
import { clientAddressOf, trustProxyOf } from './trust-proxy.ts';
import { createUploadSlots } from './upload-slots.ts';

export interface GatewayDependencies {
  config: GatewayConfig;
  bus: Bus;
  db: SqlDatabase;
  cache: Cache;
  blobs: BlobStore;
  log: Logger;
  readiness: ReadinessChecks;
  /** How long the public /ready shares one check of `readiness` among its askers (1 s; tests that count checks: 0). */
  readinessShareMs?: number;
  requestTimeoutMs: number;
  clock: () => Date;
  /** Where accounts and API keys are recorded as events (the account's stream), with their rows in the event's transaction. */
  eventStore: EventStore;
  /**
   * Measurement only: every request acts as this key, with no authentication, scope check or
   * limits, so bench/auth.ts can compare one route with and without them. Nothing in the product's
   * configuration sets it.
   */
  uncheckedKey?: AuthenticatedKey;
}

/** An incoming X-Request-Id is kept when it is a plain token; otherwise a new one is made. */
const acceptableRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

function createAjv(coerceTypes: boolean, log: Logger): Ajv {
  // Bodies are JSON and must carry the right types; query strings and path parameters are text.
  // verbose: a refusal carries its schema, whose description makes the message (error-envelope.ts).
  // unicode false: a length counts UTF-16 code units (an emoji beyond U+FFFF is two), as every
  // service's own check of the same schema does (TypeBox, rpc-server.ts); counted in code points
  // here, a value between the two passed the gateway and was refused behind it in another form.
  // Ajv calls the option deprecated (code points are JSON Schema's count) and says so at each start:
  // that line is left out of the log, any other of Ajv's goes to it.
  // unicodeRegExp false: a `pattern` is read without the `u` flag, as TypeBox reads it in every
  // service (`new RegExp(pattern)`): a character beyond U+FFFF is two UTF-16 units to both, so a
  // pattern that tells such characters apart (printableNonBlankTextPattern's invisible ones) means
  // the same here and behind.
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    verbose: true,
    unicode: false,
    unicodeRegExp: false,
    logger: {
      log: (...args: unknown[]) => log.info({ ajv: args }, 'ajv'),
      warn: (...args: unknown[]) => {
        if (!String(args[0]).startsWith('DEPRECATED: option unicode.')) log.warn({ ajv: args }, 'ajv');
      },
      error: (...args: unknown[]) => log.error({ ajv: args }, 'ajv'),
    },
  });
  addFormats.default(ajv);
  return ajv;
}

/** The gateway's HTTP app, not yet listening. */
export async function buildGatewayApp(deps: GatewayDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    // One line per response (onResponse below) instead of fastify's two; request ids under the same key as the services'.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    bodyLimit: deps.config.HALLMARK_BODY_LIMIT_BYTES,
    // The longest path parameter a route takes (a compressed Digital Link with its signature, 2048);
    // each route's schema bounds its own. Fastify's default of 100 refused such a link before routing.
    routerOptions: { maxParamLength: 2048 },
    // An absolute-form target (`GET http://other.example/01/…`) read as its path, before routing and
    // before anything reads request.url (request-target.ts).
    rewriteUrl: (request) => originFormOf(request.url ?? '/'),
    requestIdHeader: false,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && acceptableRequestId.test(incoming) ? incoming : randomUUID();
    },
    // Stopping: answered by drainOnClose (draining.ts) in the API's envelope, connections closed after their answers.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Timeouts for slow clients; envelopes for what is refused before routing (input-limits.ts).
    ...hostileClientOptions(deps.config, resolverPageOfUnrouted),
    // Whose X-Forwarded-For decides request.ip (rate limits, logs, scans): nobody's unless configured.
    trustProxy: trustProxyOf(deps.config.HALLMARK_TRUST_PROXY),
  });

  drainOnClose(app);
  installProtocolRefusals(app);

  // Before any hook that counts the client: an address a trusted proxy wrote with a port, or no
  // address at all, is read as clientAddressOf says (the request's own `ip`, shadowing fastify's).
  if (deps.config.HALLMARK_TRUST_PROXY !== 'off') {
    app.addHook('onRequest', (request, _reply, done) => {
      const address = clientAddressOf(request.ip, request.socket.remoteAddress);
      if (address !== request.ip) Object.defineProperty(request, 'ip', { value: address });
      done();
    });
  }

  // Absolute links in answers start here: configuration, never the Host or X-Forwarded-Host header
  // (a forged one would otherwise put another origin into pages, linksets and cached answers).
  let boundOrigin: string | undefined;
  const publicOrigin = (): string => {
    const configured = deps.config.HALLMARK_PUBLIC_URL ?? deps.config.HALLMARK_RESOLVER_URL;
    if (configured) return configured;
    if (!boundOrigin) {
      const address = app.server.address();
      boundOrigin = `http://localhost:${typeof address === 'object' && address ? address.port : deps.config.PORT}`;
    }
    return boundOrigin;
  };

  const bodyAjv = createAjv(false, deps.log);
  const textAjv = createAjv(true, deps.log);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema));

  // The OpenAPI document is generated from the contracts' route list; refusing any other route keeps them equal.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const known = methods.every((method) =>
      routes.some(
        (contract) =>
          routerPathOf(contract) === route.url &&
          (contract.method === method || (method === 'HEAD' && contract.method === 'GET')),
      ),
    );
    if (!known)
      throw new Error(`Route ${methods.join(',')} ${route.url} is not in @hallmark/contracts routes; add it there first.`);
  });
  const turns = createRequestTurns(deps.config.HALLMARK_REQUESTS_PER_TURN);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // The rest of the request runs in its turn of the event loop (request-turns.ts).
    const turn = turns.admit(request.raw.socket, request.method);
    if (turn === 'refused') {
      throw new HallmarkError(
        'SERVICE_UNAVAILABLE',
        `More than ${maxWaitingPerConnection} requests wait on this connection; send the next once an answer has come.`,
        { retryAfterSeconds: 1 },
      );
    }
    if (turn === 'now') return;
    await turn;
    // The client left while its request waited (a closed connection aborts what it sent): nobody can
    // read an answer, so none is made and nothing the request asked for is done (docs/API.md, "Pipelining").
    if (request.raw.destroyed) {
      request.log.info({ method: request.method, url: request.url }, 'client left before its turn; not run');
      reply.hijack();
    }
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    // No answer is to be read as another type than it says (JSON, pages, images, errors alike).
    reply.header('x-content-type-options', 'nosniff');
    // An answer to a request with an API key is that account's: no cache keeps it, whatever the route set.
    if (request.headers['x-api-key'] !== undefined && !String(reply.getHeader('cache-control') ?? '').includes('no-store')) {
      reply.header('cache-control', 'no-store');
    }
    done(null, payload);
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        url: request.routeOptions.url ?? request.url,
        // The client's address (behind trusted proxies, the forwarded one).
        client: request.ip,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
  });

  app.setErrorHandler((error, request, reply) => {
    // The gateway's own stores (keys, idempotency) unreachable: an outage to retry, not a 500.
    if (isDependencyOutage(error)) request.log.warn({ err: error }, 'a store is unreachable');
    const apiError = toApiError(outageAsUnavailable(error));
    if (apiError.code === 'INTERNAL_ERROR') request.log.error({ err: error }, 'internal error');
    // A refusal by a hook that runs before the request-id hook (a stopping gateway's 503) has it too.
    if (!reply.hasHeader('x-request-id')) reply.header('x-request-id', request.id);
    if (apiError.code === 'RATE_LIMITED' || apiError.status >= 500) reply.header('cache-control', 'no-store');
    // A service that says when to come back (busy, or a store unreachable): tell the client too.
    const retryAfter = apiError.details?.retryAfterSeconds;
    if (apiError.code === 'SERVICE_UNAVAILABLE' && typeof retryAfter === 'number' && !reply.hasHeader('retry-after')) {
      reply.header('retry-after', String(Math.max(1, Math.ceil(retryAfter))));
    }
    // The resolver's answers, refusals included, carry its headers (CORS, referrer policy: docs/RESOLVER.md),
    // and its visitors are people with browsers: they get a page, not JSON.
    if (request.routeOptions.config?.route?.tags.includes('resolver')) {
      withResolverHeaders(reply);
      if (prefersHtml(request))
        return reply.status(apiError.status).type('text/html; charset=utf-8').send(resolverErrorPage(apiError));
    }
    return reply.status(apiError.status).send(errorEnvelope(apiError, request.id));
  });
  const allowedMethods = createAllowedMethods(routes);
  app.setNotFoundHandler((request, reply) => {
    // A known path asked with another method: 405 and what it does take (RFC 9110 §15.5.6).
    const allow = allowedMethods(decodedPathOf(request.url.split('?')[0] ?? ''));
    if (allow.length > 0) {
      const refused = new HallmarkError(
        'METHOD_NOT_ALLOWED',
        `${request.method} is not served on this path; use ${allow.join(', ')}.`,
        { allowed: allow },
      );
      return reply.status(405).header('allow', allow.join(', ')).send(errorEnvelope(refused, request.id));
    }
    const notFound = new HallmarkError('NOT_FOUND', `There is no ${request.method} ${request.url.split('?')[0]}.`);
    return reply.status(404).send(errorEnvelope(notFound, request.id));
  });

  // One field more than a photo upload takes: the upload counts its fields itself and refuses the
  // 21st (routes/auction.ts), which the parser's own limit, met exactly, reported as a cut-short body.
  await app.register(multipart, {
    limits: { fileSize: deps.config.HALLMARK_UPLOAD_LIMIT_BYTES, files: 1, fields: maxUploadFields + 1 },
  });
  // Before authentication's preValidation hooks, so refused input spends no quota.
  installInputLimits(app);
  // After authentication (onRequest), before a large body is read: one account's batches take a
  // bounded share of this gateway's memory and event loop (large-bodies.ts).
  installLargeBodyLimits(app, {
    atOnce: deps.config.HALLMARK_LARGE_BODIES_AT_ONCE,
    bytesPerSecond: deps.config.HALLMARK_LARGE_BODY_BYTES_PER_SECOND,
    burstBytes: generateCodeBatchRoute.bodyLimit ?? 16 * 1024 * 1024,
  });
  // After authentication (onRequest) and before the limits are spent (preValidation): a replay spends
  // the burst alone, no daily quota (a retry past the day's limit still gets its answer).
  const idempotency = installIdempotency(app, {
    db: deps.db,
    clock: deps.clock,
    leaseMs: deps.config.HALLMARK_IDEMPOTENCY_LEASE_MS,
    log: deps.log,
    beforeReplay: async (request, reply) => {
      if (request.apiKey) applyLimitOutcome(reply, await rateLimiter.spendBurst(request.apiKey));
    },
    closeAttemptSpend: (owner, claim) => rateLimiter.closeAttemptSpend(owner, claim),
  });

  // Key and claim changes made anywhere (another replica, the CLI) reach the caches within a second.
  const epochs = await watchCacheEpochs(deps.db, {
    onError: (error) => deps.log.warn({ err: error }, 'cache epochs unreadable; keeping the last ones'),
  });
  app.addHook('onClose', async () => epochs.stop());
  const authenticator = createAuthenticator({ db: deps.db, clock: deps.clock, epochs });
  const verificationKeys = createVerificationKeys(deps.db, { epochs });
  // The web console's sessions (docs/SECURITY.md, "Console sessions"): their cookie stands in for x-api-key.
  const sessions = createConsoleSessions({ db: deps.db, authenticator, clock: deps.clock, log: deps.log });
  app.addHook('onClose', async () => sessions.stop());
  // lastUsedAt of API keys: noted per request in memory, written in batches (auth/key-last-used.ts).
  const keyLastUsed = createKeyLastUsed({ db: deps.db, clock: deps.clock, log: deps.log });
  app.addHook('onClose', async () => keyLastUsed.stop());
  // A cookie-authenticated change, and a sign-in, must come from the gateway's own origin (auth/csrf.ts).
  const ownOrigins = (request: FastifyRequest) => [publicOrigin(), `${request.protocol}://${request.host}`];
  const rateLimiter = createRateLimiter({
    cache: deps.cache,
    clock: deps.clock,
    publicPerSecond: deps.config.HALLMARK_PUBLIC_RATE_LIMIT,
    authFailuresPerMinute: deps.config.HALLMARK_AUTH_FAILURES_PER_MINUTE,
    // A key revoked through another gateway a moment ago, still in this one's cache (keys.ts marks it).
    refusalOfStoppedKey: (keyId, stop) => refusalOfStoppedKey(authenticator, keyId, stop),
    // Webhooks' quota.threshold: compliance-service records each once (docs/WEBHOOKS.md); a
    // failed telling is told again by the next request past the threshold.
    onQuotaThreshold: async ({ accountId, environment, ...crossed }) => {
      try {
        await services.call(recordQuotaThresholdRpc, { principal: { accountId, environment }, ...crossed }, 'quota-threshold');
      } catch (error) {
        deps.log.warn({ err: error, accountId }, 'quota threshold not recorded for webhooks yet; the next request tries again');
        throw error;
      }
    },
  });
  if (deps.uncheckedKey) {
    installUncheckedKey(app, deps.uncheckedKey);
  } else {
    installRequestAuth(app, {
      authenticator,
      rateLimiter,
      sessions,
      ownOrigins,
      keyLastUsed,
      idempotency,
      clock: deps.clock,
    });
    installKeyRestrictions(app);
  }
  // A key revoked or added on any replica reaches this one's caches within a bus round trip, and its
  // epochs too (the resolver's reload window ends with them) rather than at the next poll.
  const forgetKid = (payload: unknown) => {
    verificationKeys.forget(String((payload as { kid: unknown }).kid));
    epochs
      .refresh()
      .catch((error: unknown) => deps.log.warn({ err: error }, 'cache epochs unreadable; the next poll reads them'));
  };
  const keyChanges = [
    await deps.bus.onBroadcast(broadcasts.apiKeyRevoked, (payload) =>
      authenticator.forget(String((payload as { keyId: unknown }).keyId)),
    ),
    await deps.bus.onBroadcast(broadcasts.publicKeyRevoked, forgetKid),
    await deps.bus.onBroadcast(broadcasts.publicKeyRegistered, forgetKid),
    await deps.bus.onBroadcast(broadcasts.signingKeyAdded, forgetKid),
    // The key set says which GTINs each key may sign for; republish it when that changes.
    await deps.bus.onBroadcast(broadcasts.gtinOwnershipChanged, () => verificationKeys.republish()),
  ];
  app.addHook('onClose', async () => {
    for (const subscription of keyChanges) await subscription.stop();
  });

  const services = createServiceCaller(deps.bus, deps.requestTimeoutMs);
  registerSystemRoutes(app, {
    services,
    readiness: deps.readiness,
    ...(deps.readinessShareMs !== undefined ? { readinessShareMs: deps.readinessShareMs } : {}),
    publicOrigin,
    consoleUrl: deps.config.HALLMARK_CONSOLE_URL,
  });
  registerWellKnownRoutes(app, { verificationKeys });
  // The web console's built files at /console (docs/CONSOLE.md).
  registerConsoleRoutes(app);
  registerAccountRoutes(app, { db: deps.db, eventStore: deps.eventStore, clock: deps.clock });
  const reportLimits = createReportLimits({
    cache: deps.cache,
    clock: deps.clock,
    perAccount: deps.config.HALLMARK_REPORT_LIMIT_PER_ACCOUNT,
    perAddress: deps.config.HALLMARK_REPORT_LIMIT_PER_ADDRESS,
  });
  registerCodeRoutes(app, { services, reportLimits, batchChunksInFlight: batchChunksInFlightOf(deps.db.engine) });
  registerCodeListingRoutes(app, { services });
  registerGtinRoutes(app, { services });
  const restrictedKeyLimits = {
    activeBlocks: deps.config.HALLMARK_RESTRICTED_KEY_MAX_ACTIVE_BLOCKS,
    links: deps.config.HALLMARK_RESTRICTED_KEY_MAX_LINKS,
  };
  registerLinkRoutes(app, { services, restrictedKeyLimits });
  registerWebhookRoutes(app, { services });
  registerScanRoutes(app, { services, restrictedKeyLimits });
  registerSchemaRoutes(app, { services });
  registerComplianceRoutes(app, { services, clock: deps.clock });
  // Each upload is held in memory while it is stored: a bounded number at once, a short queue, then
  // 503; half of them at most for one account, and each within the request timeout (upload-slots.ts).
  const uploads = createUploadSlots({
    atOnce: deps.config.HALLMARK_UPLOADS_AT_ONCE,
    requestTimeoutMs: deps.config.HALLMARK_HTTP_REQUEST_TIMEOUT_MS,
  });
  registerAuctionRoutes(app, { services, blobs: deps.blobs, idempotency, uploads });
  // A brand logo is an upload too: it shares the photos' slots.
  registerAccountSettingsRoutes(app, {
    db: deps.db,
    bus: deps.bus,
    clock: deps.clock,
    uploads,
    ...(deps.eventStore ? { eventStore: deps.eventStore } : {}),
  });
  registerBrandAssetRoutes(app, { db: deps.db });
  registerResolverRoutes(app, {
    publicOrigin,
    ownOrigins,
    services,
    cache: deps.cache,
    clock: deps.clock,
    reloadWindowMs: deps.config.HALLMARK_RESOLVER_RELOAD_SECONDS * 1000,
    epochs,
    reportLimits,
  });
  registerSessionRoutes(app, { db: deps.db, sessions, authenticator, rateLimiter, ownOrigins });
  registerUsageRoutes(app, { db: deps.db, rateLimiter, clock: deps.clock });
  registerKeyRoutes(app, {
    db: deps.db,
    bus: deps.bus,
    services,
    authenticator,
    rateLimiter,
    verificationKeys,
    clock: deps.clock,
    eventStore: deps.eventStore,
  });
  return app;
}
