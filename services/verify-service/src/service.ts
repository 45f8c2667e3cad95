import {
  changedClaimOf,
  createGtinChanges,
  createGtinIssuers,
  createGtinSigners,
  createVerificationKeys,
  watchCacheEpochs,
} from '@hallmark/accounts';
import { createComplianceConfigCache } from '@hallmark/compliance-client';
import {
  broadcasts,
  codeStatusRpc,
  createBlocksRpc,
  decideCodeReportRpc,
  deleteBlockRpc,
  listBlocksRpc,
  listCodeReportsRpc,
  listScansRpc,
  objectLabelStandingRpc,
  publicReportRpc,
  removeBlocksMadeByRpc,
  reportCodeRpc,
  resolveScanRpc,
  scanAggregatesRpc,
  scanCountriesRpc,
  topScannedCodesRpc,
  verifyCodeRpc,
} from '@hallmark/contracts';
import { ProjectionMovedOn } from '@hallmark/event-store';
import { defineService, servePing, serveRpc, stopAll } from '@hallmark/runtime';
import { createCodeDirectory } from './code-directory.ts';
import { createCodeProjection, runCodeProjection } from './code-projection.ts';
import { VerifyServiceConfig } from './config.ts';
import { createBlocks, deleteBlock, listBlocks, removeBlocksMadeBy } from './handlers/blocklist.ts';
import { codeStatus } from './handlers/code-status.ts';
import { objectLabelStanding } from './handlers/object-label-standing.ts';
import { createCodeBlocks, decideCodeReport, listCodeReports, publicReport, reportCode } from './handlers/report-code.ts';
import { resolveScan } from './handlers/resolve.ts';
import { listScans, scanAggregates, scanCountries, topScannedCodes } from './handlers/scans.ts';
import { verifyCode } from './handlers/verify-code.ts';
import { migrateVerifyService } from './migrations.ts';
import { createRiskRulesSource } from './risk-rules-source.ts';
import { projectScanHistory } from './scan-history.ts';
import { createScanPublisher } from './scan-publisher.ts';

/** Verification: signatures, scan history, risk rules and counterfeit reports. */
export const verifyService = defineService({
  name: 'verify-service',
  configSchema: VerifyServiceConfig,
  async start(context) {
    const { infra, log, base, clock, config } = context;
    await migrateVerifyService(infra.db);
    const epochs = await watchCacheEpochs(infra.db, {
      onError: (error) => log.warn({ err: error }, 'cache epochs unreadable; keeping the last ones'),
    });
    const keys = createVerificationKeys(infra.db, { epochs });
    // Claim changes this replica heard of, by GTIN: its caches drop only what a change is about.
    const claimChanges = createGtinChanges();
    const configs = createComplianceConfigCache(infra.bus, {
      timeoutMs: base.HALLMARK_REQUEST_TIMEOUT_MS,
      epochs,
      onStale: (error) => log.warn({ code: error.code }, 'compliance config unavailable; using the last copy'),
    });
    const rules = createRiskRulesSource(configs, log);
    const blocks = createCodeBlocks(infra.db, { epochs, log });
    const scans = createScanPublisher(infra.bus, log);
    // Codes from verify-service's own read model (fed from the event store), code-service only for
    // what the projection has not reached yet, so verification goes on while code-service is down.
    let lastFallbackLog = 0;
    const codes = createCodeDirectory(
      infra.bus,
      { db: infra.db, signers: createGtinSigners(infra.db, { epochs, changes: claimChanges }), epochs, changes: claimChanges },
      {
        timeoutMs: base.HALLMARK_REQUEST_TIMEOUT_MS,
        onFallback: (error) => {
          if (Date.now() - lastFallbackLog < 10_000) return;
          lastFallbackLog = Date.now();
          log.warn({ code: error.code }, 'code-service unavailable; verifying from the read model alone');
        },
        onReadModelError: (error) => log.warn({ err: error }, 'code read model unavailable; asking code-service'),
      },
    );
    const codeProjection = runCodeProjection(
      infra.eventStore,
      // Rows name their signing key's number once no verify-service of a release before is connected.
      createCodeProjection(infra.db, undefined, infra.keyFormsAllowed),
      (error) => {
        if (error instanceof ProjectionMovedOn) log.debug(error.message);
        else log.error({ err: error }, 'code directory projection failed; retrying');
      },
    );
    // Who a resolver page names as a GTIN's issuer, remembered briefly (gtin-issuers.ts).
    const issuers = createGtinIssuers(infra.db, { epochs, changes: claimChanges });
    const deps = {
      db: infra.db,
      codes,
      keys,
      issuers,
      cache: infra.cache,
      scans,
      rules,
      blocks,
      clock,
    };
    const reportDeps = { db: infra.db, codes: deps.codes, keys, blocks, eventStore: infra.eventStore, bus: infra.bus, clock };
    const blocklistDeps = {
      db: infra.db,
      eventStore: infra.eventStore,
      bus: infra.bus,
      reload: blocks.reloadListed,
      clock,
      maxActiveBlocks: config.HALLMARK_MAX_ACTIVE_BLOCKS,
    };
    const forgetKid = (payload: unknown) => keys.forget(String((payload as { kid: unknown }).kid));
    const subscriptions = [
      epochs,
      await infra.bus.onBroadcast(broadcasts.publicKeyRevoked, forgetKid),
      await infra.bus.onBroadcast(broadcasts.publicKeyRegistered, forgetKid),
      // Drops what is remembered of the GTINs the change names (signers, codes, issuers), no other.
      await infra.bus.onBroadcast(broadcasts.gtinOwnershipChanged, (payload) => claimChanges.changed(changedClaimOf(payload))),
      await infra.bus.onBroadcast(broadcasts.brandingChanged, () => issuers.forgetAll()),
      await configs.start(),
      await blocks.start(infra.bus),
      await projectScanHistory(infra.bus, infra.db),
      codeProjection,
      scans, // after the verifications that record scans stop: stopping publishes what is queued
      await servePing('verify-service', context),
      await serveRpc(infra.bus, log, verifyCodeRpc, async (request, { requestId }) => verifyCode(deps, request, requestId)),
      await serveRpc(infra.bus, log, resolveScanRpc, async (request, { requestId }) => resolveScan(deps, request, requestId)),
      await serveRpc(infra.bus, log, objectLabelStandingRpc, async (request, { requestId }) =>
        objectLabelStanding(deps, request, requestId),
      ),
      await serveRpc(infra.bus, log, publicReportRpc, async (request, { requestId }) =>
        publicReport(reportDeps, request, requestId),
      ),
      await serveRpc(infra.bus, log, reportCodeRpc, async (request, { requestId }) => reportCode(reportDeps, request, requestId)),
      await serveRpc(infra.bus, log, listCodeReportsRpc, async (request) =>
        listCodeReports(infra.db, request.principal, request.query),
      ),
      await serveRpc(infra.bus, log, listScansRpc, async (request) => listScans(infra.db, request.principal, request.query)),
      // A code's scans, reports and block (GET /codes/{assetId}).
      await serveRpc(infra.bus, log, codeStatusRpc, async ({ principal, gtin, serial }) =>
        codeStatus(infra.db, principal, gtin, serial),
      ),
      await serveRpc(infra.bus, log, scanAggregatesRpc, async (request) =>
        scanAggregates(infra.db, request.principal, request.query, clock()),
      ),
      await serveRpc(infra.bus, log, topScannedCodesRpc, async (request) =>
        topScannedCodes(infra.db, request.principal, request.query, clock()),
      ),
      await serveRpc(infra.bus, log, scanCountriesRpc, async (request) =>
        scanCountries(infra.db, request.principal, request.query, clock()),
      ),
      await serveRpc(infra.bus, log, createBlocksRpc, async (request) => createBlocks(blocklistDeps, request)),
      await serveRpc(infra.bus, log, listBlocksRpc, async (request) => listBlocks(infra.db, request.principal, request.query)),
      await serveRpc(infra.bus, log, deleteBlockRpc, async (request) => deleteBlock(blocklistDeps, request)),
      await serveRpc(infra.bus, log, removeBlocksMadeByRpc, async (request) => removeBlocksMadeBy(blocklistDeps, request)),
      await serveRpc(infra.bus, log, decideCodeReportRpc, async (request, { requestId }) =>
        decideCodeReport(reportDeps, request, requestId),
      ),
    ];
    return { stop: () => stopAll(subscriptions) };
  },
});
