import {
  changedClaimOf,
  createGtinChanges,
  createGtinSigners,
  createSigningKeyring,
  migrateAccounts,
  watchCacheEpochs,
} from '@hallmark/accounts';
import {
  broadcasts,
  claimGtinRpc,
  createLinkRpc,
  createSchemaRpc,
  deleteLinkRpc,
  deleteSchemaRpc,
  findCodesRpc,
  generateCodeRpc,
  generateCodesRpc,
  getCodeRpc,
  getSchemaRpc,
  grantGtinRpc,
  itemLinksRpc,
  listCodesRpc,
  listGtinClaimsRpc,
  listLinksRpc,
  listSchemasRpc,
  removeLinksMadeByRpc,
  renderQrRpc,
  revokeGtinClaimRpc,
  rotateSigningKeyRpc,
  updateLinkRpc,
  updateSchemaRpc,
  validateMetadataRpc,
} from '@hallmark/contracts';
import { parseMasterKey } from '@hallmark/crypto';
import { defineService, servePing, serveRpc, stopAll } from '@hallmark/runtime';
import { CodeServiceConfig } from './config.ts';
import { findCodes } from './handlers/find-codes.ts';
import { createGroupCommit, generateCode, generateCodes } from './handlers/generate-code.ts';
import { createGtinClaims } from './handlers/gtin-claims.ts';
import { createLinks } from './handlers/links.ts';
import { createQrRenderers } from './handlers/qr-renderers.ts';
import { renderQr } from './handlers/render-qr.ts';
import { createSchemaCatalog } from './handlers/schemas.ts';
import { findOwnCode, listOwnCodes } from './store/code-listing.ts';
import { migrateCodes, reportOwnershipConflicts } from './store/code-store.ts';
import { createLinkFormSource } from './store/link-forms.ts';

/** Signed codes: generation, lookup for verification, and the signing keys behind them. */
export const codeService = defineService({
  name: 'code-service',
  configSchema: CodeServiceConfig,
  async start(context) {
    const { infra, log, config, clock } = context;
    await migrateAccounts(infra.db);
    await migrateCodes(infra.db);
    await reportOwnershipConflicts(infra.db, log);
    const epochs = await watchCacheEpochs(infra.db, {
      onError: (error) => log.warn({ err: error }, 'cache epochs unreadable; keeping the last ones'),
    });
    // Claim changes this replica heard of, by GTIN: the signers it remembers of other GTINs stay.
    const claimChanges = createGtinChanges();
    const signers = createGtinSigners(infra.db, { epochs, changes: claimChanges });
    const gtinClaims = createGtinClaims({
      db: infra.db,
      eventStore: infra.eventStore,
      bus: infra.bus,
      clock,
      selfServiceTestClaims: config.HALLMARK_SELF_SERVICE_TEST_CLAIMS,
    });
    const keyring = createSigningKeyring(infra.db, parseMasterKey(config.HALLMARK_MASTER_KEY), {
      epochs,
      onNewKey: (kid, owner) => infra.bus.broadcast(broadcasts.signingKeyAdded, { kid, ...owner }),
    });
    const schemas = createSchemaCatalog({ db: infra.db, eventStore: infra.eventStore, clock });
    const links = createLinks({
      db: infra.db,
      eventStore: infra.eventStore,
      clock,
      signers,
      resolverUrl: config.HALLMARK_RESOLVER_URL,
    });
    const qrRenderers = createQrRenderers();
    const generate = {
      schemas,
      signers,
      db: infra.db,
      eventStore: infra.eventStore,
      keyring,
      resolverUrl: config.HALLMARK_RESOLVER_URL,
      linkOrder: config.HALLMARK_LINK_ORDER,
      // Rows name the link's form instead of holding it (migration 0009), and the form the signing key
      // (0010), once no code-service of a release before each is connected.
      linkForm: createLinkFormSource(
        infra.db,
        { origin: config.HALLMARK_RESOLVER_URL, order: config.HALLMARK_LINK_ORDER },
        { links: infra.linkFormsAllowed, keys: infra.keyFormsAllowed },
      ),
      clock,
      // Concurrent single generates share a transaction (one commit for many codes and events).
      groupCommit: createGroupCommit({ db: infra.db, eventStore: infra.eventStore }),
    };
    const subscriptions = [
      epochs,
      await servePing('code-service', context),
      // A key rotated on another replica is the one to sign with from now on.
      await infra.bus.onBroadcast(broadcasts.signingKeyAdded, (payload) => keyring.onSigningKeyAdded(payload)),
      await infra.bus.onBroadcast(broadcasts.gtinOwnershipChanged, (payload) => claimChanges.changed(changedClaimOf(payload))),
      await serveRpc(infra.bus, log, grantGtinRpc, async ({ principal, accountId, input }) =>
        gtinClaims.grant(principal, accountId, input),
      ),
      await serveRpc(infra.bus, log, claimGtinRpc, async ({ principal, input }) => gtinClaims.claim(principal, input)),
      await serveRpc(infra.bus, log, listGtinClaimsRpc, async ({ principal, accountId, query, asOperator }) =>
        gtinClaims.list(principal, accountId, query, asOperator),
      ),
      await serveRpc(infra.bus, log, revokeGtinClaimRpc, async ({ principal, claimId, asOperator, holdsAll }) =>
        gtinClaims.revoke(principal, claimId, asOperator, holdsAll === true),
      ),
      // Idempotency-Key is the gateway's (services/gateway/src/idempotency.ts), for every route alike.
      await serveRpc(infra.bus, log, generateCodeRpc, async ({ principal, body, requestKey }, { requestId }) =>
        generateCode(generate, principal, body, requestId, requestKey),
      ),
      await serveRpc(infra.bus, log, generateCodesRpc, async ({ principal, items, firstIndex, requestKey }, { requestId }) =>
        generateCodes(generate, principal, items, firstIndex, requestId, requestKey),
      ),
      await serveRpc(infra.bus, log, findCodesRpc, async ({ environment, gtin, serial }) =>
        findCodes(infra.db, signers, environment, gtin, serial),
      ),
      // The console's codes listing (GET /codes, GET /codes/{assetId}).
      await serveRpc(infra.bus, log, listCodesRpc, async ({ principal, query }) => listOwnCodes(infra.db, principal, query)),
      await serveRpc(infra.bus, log, getCodeRpc, async ({ principal, assetId }) => findOwnCode(infra.db, principal, assetId)),
      await serveRpc(infra.bus, log, rotateSigningKeyRpc, async ({ principal }) => keyring.rotate(principal)),
      await serveRpc(infra.bus, log, renderQrRpc, async (request) => renderQr(request, qrRenderers)),
      await serveRpc(infra.bus, log, createSchemaRpc, async ({ principal, body }) => schemas.create(principal, body)),
      await serveRpc(infra.bus, log, listSchemasRpc, async ({ principal, query }) => schemas.list(principal, query)),
      await serveRpc(infra.bus, log, getSchemaRpc, async ({ principal, id, version }) => schemas.get(principal, id, version)),
      await serveRpc(infra.bus, log, updateSchemaRpc, async ({ principal, id, body }) => schemas.update(principal, id, body)),
      await serveRpc(infra.bus, log, deleteSchemaRpc, async ({ principal, id }) => {
        await schemas.remove(principal, id);
        return { deleted: true as const };
      }),
      await serveRpc(infra.bus, log, createLinkRpc, async ({ principal, body, keyId, keyLimit }) =>
        links.create(principal, body, keyId, keyLimit),
      ),
      await serveRpc(infra.bus, log, listLinksRpc, async ({ principal, query }) => links.list(principal, query)),
      await serveRpc(infra.bus, log, updateLinkRpc, async ({ principal, id, body, keyId }) =>
        links.update(principal, id, body, keyId),
      ),
      await serveRpc(infra.bus, log, deleteLinkRpc, async ({ principal, id, keyId }) => {
        await links.remove(principal, id, keyId);
        return { deleted: true as const };
      }),
      await serveRpc(infra.bus, log, removeLinksMadeByRpc, async ({ principal, createdBy, keyId }) =>
        links.removeMadeBy(principal, createdBy, keyId),
      ),
      await serveRpc(infra.bus, log, itemLinksRpc, async (item) => links.forItem(item)),
      await serveRpc(infra.bus, log, validateMetadataRpc, async ({ principal, id, version, data }) =>
        schemas.validate(principal, id, version, data),
      ),
    ];
    return {
      stop: async () => {
        await stopAll(subscriptions);
        await qrRenderers.close();
      },
    };
  },
});
