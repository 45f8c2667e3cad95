import { describe, expect, it } from 'vitest';
import { webhookEventTypes } from '../../../packages/contracts/src/schemas/webhooks.ts';
import { webhookEventChoices } from './pages/webhooks.tsx';

describe('the webhooks page’s event choices', () => {
  it('are the API’s catalogue, each once, in its order', () => {
    expect(webhookEventChoices.map((choice) => choice.type)).toEqual([...webhookEventTypes]);
  });
});
