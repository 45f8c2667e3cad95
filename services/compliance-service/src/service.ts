import { defineService, servePing, stopAll } from '@hallmark/runtime';
import { Type } from '@sinclair/typebox';

export const complianceService = defineService({
  name: 'compliance-service',
  configSchema: Type.Object({}),
  async start(context) {
    const subscriptions = [await servePing('compliance-service', context)];
    return { stop: () => stopAll(subscriptions) };
  },
});
