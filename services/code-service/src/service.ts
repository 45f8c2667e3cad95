import { defineService, servePing, stopAll } from '@hallmark/runtime';
import { Type } from '@sinclair/typebox';

export const codeService = defineService({
  name: 'code-service',
  configSchema: Type.Object({}),
  async start(context) {
    const subscriptions = [await servePing('code-service', context)];
    return { stop: () => stopAll(subscriptions) };
  },
});
