import { createSigningKeyring, watchCacheEpochs } from '@hallmark/accounts';
import {
  broadcasts,
  exportPageRpc,
  getComplianceConfigRpc,
  merkleConsistencyRpc,
  merkleProofRpc,
  merkleRootRpc,
  updateComplianceConfigRpc,
  verifyChainRpc,
} from '@hallmark/contracts';
import { parseMasterKey } from '@hallmark/crypto';
import { defineService, servePing, serveRpc, stopAll } from '@hallmark/runtime';
import { createCheckpointSigner } from './checkpoint-signer.ts';
import { ComplianceServiceConfig } from './config.ts';
import { createComplianceConfigs } from './handlers/compliance-config.ts';
import { exportPage } from './handlers/export-page.ts';
import { merkleConsistency, merkleProof, merkleRoot } from './handlers/merkle.ts';
import { verifyChain } from './handlers/verify-chain.ts';
import { createMerkleProjection, runMerkleProjection } from './merkle-projection.ts';
import { createProjectionWait } from './projection-wait.ts';
import { migrateCompliance } from './store/merkle-store.ts';
import { startWebhooks } from './webhooks/module.ts';

/** Compliance: chain checks, the Merkle projection and its proofs, signed checkpoints, exports, config. */
export const complianceService = defineService({
  name: 'compliance-service',
  configSchema: ComplianceServiceConfig,
  async start(context) {
    const { infra, log, config, clock } = context;
    await migrateCompliance(infra.db);
    const epochs = await watchCacheEpochs(infra.db, {
      onError: (error) => log.warn({ err: error }, 'cache epochs unreadable; keeping the last ones'),
    });
    const masterKey = parseMasterKey(config.HALLMARK_MASTER_KEY);
    const keyring = createSigningKeyring(infra.db, masterKey, { epochs });
    const configs = createComplianceConfigs({ db: infra.db, eventStore: infra.eventStore, bus: infra.bus, clock });
    // Read your writes: a read waits until the projection holds every event stored before it.
    const projectionWait = createProjectionWait({
      db: infra.db,
      eventStore: infra.eventStore,
      wakeProjection: () => projection.wake(),
      timeoutMs: config.HALLMARK_PROJECTION_WAIT_MS,
    });
    const projection = runMerkleProjection(
      infra.eventStore,
      createMerkleProjection(infra.db, undefined, { onProjected: () => projectionWait.projected() }),
      (error) => log.warn({ err: error }, 'Merkle projection batch failed; retrying'),
    );
    const merkle = {
      db: infra.db,
      signCheckpoint: createCheckpointSigner(keyring, config.HALLMARK_CHECKPOINT_ORIGIN, { clock, db: infra.db }),
      projectionWait,
    };
    const subscriptions = [
      epochs,
      { stop: () => projection.stop() },
      await servePing('compliance-service', context),
      // A key rotated on another replica is the one to sign with from now on.
      await infra.bus.onBroadcast(broadcasts.signingKeyAdded, (payload) => keyring.onSigningKeyAdded(payload)),
      await serveRpc(infra.bus, log, verifyChainRpc, async ({ principal, assetId }) =>
        verifyChain({ db: infra.db, eventStore: infra.eventStore, clock, projectionWait }, principal, assetId),
      ),
      await serveRpc(infra.bus, log, merkleRootRpc, async ({ principal, assetId }) => merkleRoot(merkle, principal, assetId)),
      await serveRpc(infra.bus, log, merkleProofRpc, async ({ principal, assetId, eventId }) =>
        merkleProof(merkle, principal, assetId, eventId),
      ),
      await serveRpc(infra.bus, log, merkleConsistencyRpc, async ({ principal, assetId, from, to }) =>
        merkleConsistency(merkle, principal, assetId, from, to),
      ),
      await serveRpc(infra.bus, log, exportPageRpc, async ({ principal, ...request }) =>
        exportPage({ ...merkle, eventStore: infra.eventStore }, principal, request),
      ),
      await serveRpc(infra.bus, log, getComplianceConfigRpc, async ({ principal }) => configs.get(principal)),
      await serveRpc(infra.bus, log, updateComplianceConfigRpc, async ({ principal, patch }) => configs.update(principal, patch)),
      ...(await startWebhooks({
        db: infra.db,
        bus: infra.bus,
        eventStore: infra.eventStore,
        log,
        clock,
        masterKey,
        keyring,
        config,
      })),
    ];
    return { stop: () => stopAll(subscriptions) };
  },
});
