import { createInProcessBus } from '@hallmark/bus';
import { broadcasts, type ComplianceConfig, getComplianceConfigRpc, HallmarkError, rpcSubject } from '@hallmark/contracts';
import { describe, expect, it } from 'vitest';
import { createComplianceConfigCache } from './index.ts';

const config = (maxScansPerWindow: number): ComplianceConfig => ({
  riskThresholds: {
    maxScansPerWindow,
    scanWindowMinutes: 60,
    repeatWindowSeconds: 10,
    maxTravelKmh: 900,
    clonedLabelClients: 10,
    clonedLabelWindowMinutes: 10,
  },
  retention: { scanHistoryDays: 400 },
  evidenceRequiredFor: ['authenticated'],
  defaultExportFormat: 'json',
});

describe('compliance config cache', () => {
  it('reads again a copy kept under an older compliance_configs epoch: a change whose broadcast was lost', async () => {
    const bus = createInProcessBus();
    const owner = { accountId: 'acc_epochs', environment: 'live' as const };
    let stored = config(20);
    let asked = 0;
    const service = await bus.serve(rpcSubject(getComplianceConfigRpc), { queue: 'compliance-service' }, async () => {
      asked += 1;
      return { config: stored, version: asked, updatedAt: null };
    });
    let epoch = 1;
    const cache = createComplianceConfigCache(bus, { timeoutMs: 1_000, cacheMs: 60_000, epochs: { current: () => epoch } });
    expect((await cache.configFor(owner)).riskThresholds.maxScansPerWindow).toBe(20);
    expect((await cache.configFor(owner)).riskThresholds.maxScansPerWindow).toBe(20);
    expect(asked).toBe(1);
    // Changed, and no broadcast came: the epoch moved (the change's trigger), so the copy is stale.
    stored = config(3);
    epoch = 2;
    expect((await cache.configFor(owner)).riskThresholds.maxScansPerWindow).toBe(3);
    expect((await cache.configFor(owner)).riskThresholds.maxScansPerWindow).toBe(3);
    expect(asked).toBe(2);
    await service.stop();
  });

  it('asks once, keeps the answer, drops it on a broadcast change, and falls back to the last copy', async () => {
    const bus = createInProcessBus();
    const owner = { accountId: 'acc_1', environment: 'live' as const };
    let stored = config(20);
    let answering = true;
    let asked = 0;
    const service = await bus.serve(rpcSubject(getComplianceConfigRpc), { queue: 'compliance-service' }, async () => {
      asked += 1;
      if (!answering) throw new HallmarkError('SERVICE_UNAVAILABLE', 'down');
      return { config: stored, version: 1, updatedAt: null };
    });
    const stale: string[] = [];
    const cache = createComplianceConfigCache(bus, {
      timeoutMs: 1_000,
      cacheMs: 60_000,
      onStale: (error) => stale.push(error.code),
    });
    const listening = await cache.start();

    expect((await cache.configFor(owner)).riskThresholds.maxScansPerWindow).toBe(20);
    expect((await cache.configFor(owner)).riskThresholds.maxScansPerWindow).toBe(20);
    expect(asked).toBe(1);

    stored = config(3);
    await bus.broadcast(broadcasts.complianceConfigChanged, owner);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await cache.configFor(owner)).riskThresholds.maxScansPerWindow).toBe(3);
    expect(asked).toBe(2);

    // compliance-service down: the last copy serves once it is out of date; without one, the error.
    answering = false;
    await bus.broadcast(broadcasts.complianceConfigChanged, owner);
    await new Promise((resolve) => setTimeout(resolve, 10));
    await expect(cache.configFor(owner)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    const expiring = createComplianceConfigCache(bus, {
      timeoutMs: 1_000,
      cacheMs: 0,
      onStale: (error) => stale.push(error.code),
    });
    answering = true;
    await expiring.configFor(owner);
    answering = false;
    expect((await expiring.configFor(owner)).riskThresholds.maxScansPerWindow).toBe(3);
    expect(stale).toEqual(['SERVICE_UNAVAILABLE']);

    await listening.stop();
    await service.stop();
  });
});
