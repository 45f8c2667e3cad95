import { defineService, servePing, stopAll } from '@hallmark/runtime';
import { Type } from '@sinclair/typebox';

export const auctionService = defineService({
  name: 'auction-service',
  configSchema: Type.Object({}),
  async start(context) {
    const subscriptions = [await servePing('auction-service', context)];
    return { stop: () => stopAll(subscriptions) };
  },
});
