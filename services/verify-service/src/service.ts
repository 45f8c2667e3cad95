import { defineService, servePing, stopAll } from '@hallmark/runtime';
import { Type } from '@sinclair/typebox';

export const verifyService = defineService({
  name: 'verify-service',
  configSchema: Type.Object({}),
  async start(context) {
    const subscriptions = [await servePing('verify-service', context)];
    return { stop: () => stopAll(subscriptions) };
  },
});
