import { hkdfSync } from 'node:crypto';
import { createSigningKeyring, createVerificationKeys, migrateAccounts, watchCacheEpochs } from '@hallmark/accounts';
import { createComplianceConfigCache } from '@hallmark/compliance-client';
import {
  auctionDashboardRpc,
  bindPhotoRpc,
  broadcasts,
  cancelTransferRpc,
  confirmTransferRpc,
  initiateTransferRpc,
  type Principal,
  provenanceHistoryRpc,
  publicVerifyObjectRpc,
  recordProvenanceEventRpc,
  registerObjectRpc,
} from '@hallmark/contracts';
import { parseMasterKey } from '@hallmark/crypto';
import { createWorkSlots, defineService, servePing, serveRpc, stopAll } from '@hallmark/runtime';
import { AuctionServiceConfig } from './config.ts';
import { bindPhoto } from './handlers/bind-photo.ts';
import { dashboard } from './handlers/dashboard.ts';
import { provenanceHistory } from './handlers/provenance-history.ts';
import { type PublicFacts, publicVerify } from './handlers/public-verify.ts';
import { recordProvenanceEvent } from './handlers/record-event.ts';
import { registerObject } from './handlers/register-object.ts';
import { cancelTransfer, confirmTransfer, initiateTransfer } from './handlers/transfers.ts';
import { createPublicFactsCache } from './public-facts-cache.ts';
import { migrateAuction } from './store/object-store.ts';
import { backfillPhotoBlobs } from './store/photo-blobs.ts';
import { backfillPhotoBytes } from './store/photo-storage.ts';

/** Auction objects: registration, reference photos, provenance events, public verification, transfers. */
export const auctionService = defineService({
  name: 'auction-service',
  configSchema: AuctionServiceConfig,
  async start(context) {
    const { infra, log, config, base, clock } = context;
    await migrateAccounts(infra.db);
    await migrateAuction(infra.db);
    const backfilled = await backfillPhotoBlobs(infra.db, infra.eventStore, clock());
    if (backfilled > 0)
      log.info({ photos: backfilled }, 'recorded the SHA-256 of photos bound before refused uploads were removed');
    const counted = await backfillPhotoBytes(infra.db, infra.eventStore);
    if (counted > 0)
      log.info({ objects: counted }, 'counted the photo bytes of objects registered before photo storage was limited');
    // Two images decoded at once, four waiting; more is 503 with Retry-After (docs/AUCTION.md, Photos).
    const decoding = createWorkSlots({ running: 2, waiting: 4, retryAfterSeconds: 2, busy: 'Too many photos are being decoded' });
    const masterKey = parseMasterKey(config.HALLMARK_MASTER_KEY);
    const epochs = await watchCacheEpochs(infra.db, {
      onError: (error) => log.warn({ err: error }, 'cache epochs unreadable; keeping the last ones'),
    });
    const keyring = createSigningKeyring(infra.db, masterKey, {
      epochs,
      onNewKey: (kid, owner) => infra.bus.broadcast(broadcasts.signingKeyAdded, { kid, ...owner }),
    });
    const keys = createVerificationKeys(infra.db, { epochs });
    const repository = { db: infra.db, eventStore: infra.eventStore, clock };
    // The public verification's reading of each object's history, per stream version (docs/AUCTION.md).
    const publicFacts = createPublicFactsCache<PublicFacts>();
    const codeKey = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'hallmark:transfer-codes', 32));
    const configs = createComplianceConfigCache(infra.bus, {
      timeoutMs: base.HALLMARK_REQUEST_TIMEOUT_MS,
      epochs,
      onStale: (error) => log.warn({ code: error.code }, 'compliance config unavailable; using the last copy'),
    });
    /** The event types the owner's compliance config says need evidence (fails closed when it cannot be read). */
    const evidenceRequiredFor = async (owner: Principal) => (await configs.configFor(owner)).evidenceRequiredFor;
    const subscriptions = [
      epochs,
      await servePing('auction-service', context),
      // A key rotated on another replica is the one to sign with from now on.
      await infra.bus.onBroadcast(broadcasts.signingKeyAdded, (payload) => keyring.onSigningKeyAdded(payload)),
      await configs.start(),
      await infra.bus.onBroadcast(broadcasts.publicKeyRevoked, (payload) =>
        keys.forget(String((payload as { kid: unknown }).kid)),
      ),
      await serveRpc(infra.bus, log, registerObjectRpc, async ({ principal, body, requestKey }) =>
        registerObject(
          { ...repository, bus: infra.bus, keyring, resolverUrl: config.HALLMARK_RESOLVER_URL },
          principal,
          body,
          requestKey,
        ),
      ),
      await serveRpc(infra.bus, log, bindPhotoRpc, async ({ principal, ...request }) =>
        bindPhoto(
          { ...repository, blobs: infra.blobs, decoding, photoBytesPerAccount: config.HALLMARK_PHOTO_BYTES_PER_ACCOUNT },
          principal,
          request,
        ),
      ),
      await serveRpc(infra.bus, log, recordProvenanceEventRpc, async ({ principal, body, requestKey }) =>
        recordProvenanceEvent({ ...repository, evidenceRequiredFor }, principal, body, requestKey),
      ),
      await serveRpc(
        infra.bus,
        log,
        publicVerifyObjectRpc,
        async ({ serial, presentedSignature, presentedGtin, presentedBatch }) =>
          publicVerify({ ...repository, keys, blobs: infra.blobs, publicFacts }, serial, {
            signature: presentedSignature,
            gtin: presentedGtin,
            batch: presentedBatch,
          }),
      ),
      await serveRpc(infra.bus, log, provenanceHistoryRpc, async ({ principal, serial }) =>
        provenanceHistory(repository, principal, serial),
      ),
      await serveRpc(infra.bus, log, initiateTransferRpc, async ({ principal, body, requestKey }) =>
        initiateTransfer({ ...repository, codeKey }, principal, body, requestKey),
      ),
      await serveRpc(infra.bus, log, confirmTransferRpc, async ({ principal, transferId, transferCode, requestKey }) =>
        confirmTransfer({ ...repository, codeKey }, principal, transferId, transferCode, requestKey),
      ),
      await serveRpc(infra.bus, log, cancelTransferRpc, async ({ principal, transferId }) =>
        cancelTransfer({ ...repository, codeKey }, principal, transferId),
      ),
      await serveRpc(infra.bus, log, auctionDashboardRpc, async ({ principal, query }) => dashboard(infra.db, principal, query)),
    ];
    return { stop: () => stopAll(subscriptions) };
  },
});
