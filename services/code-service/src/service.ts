import { createSigningKeyring, migrateAccounts } from '@hallmark/accounts';
import { broadcasts, rotateSigningKeyRpc } from '@hallmark/contracts';
import { parseMasterKey } from '@hallmark/crypto';
import { defineService, servePing, serveRpc, stopAll } from '@hallmark/runtime';
import { CodeServiceConfig } from './config.ts';

/** Signed codes: generation (issue #4) and the signing keys behind them. */
export const codeService = defineService({
  name: 'code-service',
  configSchema: CodeServiceConfig,
  async start(context) {
    const { infra, log } = context;
    await migrateAccounts(infra.db);
    const keyring = createSigningKeyring(infra.db, parseMasterKey(context.config.HALLMARK_MASTER_KEY), {
      onNewKey: (kid) => infra.bus.broadcast(broadcasts.signingKeyAdded, { kid }),
    });
    const subscriptions = [
      await servePing('code-service', context),
      await serveRpc(infra.bus, log, rotateSigningKeyRpc, async ({ principal }) => keyring.rotate(principal)),
    ];
    return { stop: () => stopAll(subscriptions) };
  },
});
