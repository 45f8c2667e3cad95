import { createSigningKeyring, migrateAccounts } from '@hallmark/accounts';
import {
  broadcasts,
  findCodesRpc,
  generateCodeRpc,
  generateCodesRpc,
  renderQrRpc,
  rotateSigningKeyRpc,
} from '@hallmark/contracts';
import { parseMasterKey } from '@hallmark/crypto';
import { defineService, servePing, serveRpc, stopAll } from '@hallmark/runtime';
import { CodeServiceConfig } from './config.ts';
import { findCodes } from './handlers/find-codes.ts';
import { generateCode, generateCodeIdempotently, generateCodes } from './handlers/generate-code.ts';
import { renderQr } from './handlers/render-qr.ts';
import { migrateCodes } from './store/code-store.ts';

/** Signed codes: generation, lookup for verification, and the signing keys behind them. */
export const codeService = defineService({
  name: 'code-service',
  configSchema: CodeServiceConfig,
  async start(context) {
    const { infra, log, config, clock } = context;
    await migrateAccounts(infra.db);
    await migrateCodes(infra.db);
    const keyring = createSigningKeyring(infra.db, parseMasterKey(config.HALLMARK_MASTER_KEY), {
      onNewKey: (kid) => infra.bus.broadcast(broadcasts.signingKeyAdded, { kid }),
    });
    const generate = {
      db: infra.db,
      eventStore: infra.eventStore,
      keyring,
      resolverUrl: config.HALLMARK_RESOLVER_URL,
      linkOrder: config.HALLMARK_LINK_ORDER,
      clock,
    };
    const subscriptions = [
      await servePing('code-service', context),
      await serveRpc(infra.bus, log, generateCodeRpc, async ({ principal, body, idempotencyKey }, { requestId }) =>
        idempotencyKey
          ? generateCodeIdempotently(generate, principal, body, idempotencyKey, requestId)
          : generateCode(generate, principal, body, requestId),
      ),
      await serveRpc(infra.bus, log, generateCodesRpc, async ({ principal, items, firstIndex }, { requestId }) => ({
        results: await generateCodes(generate, principal, items, firstIndex, requestId),
      })),
      await serveRpc(infra.bus, log, findCodesRpc, async ({ environment, gtin, serial }) =>
        findCodes(infra.db, environment, gtin, serial),
      ),
      await serveRpc(infra.bus, log, rotateSigningKeyRpc, async ({ principal }) => keyring.rotate(principal)),
      await serveRpc(infra.bus, log, renderQrRpc, async (request) => renderQr(request)),
    ];
    return { stop: () => stopAll(subscriptions) };
  },
});
