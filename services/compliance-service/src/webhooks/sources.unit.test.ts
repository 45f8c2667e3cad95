import type { StoredEvent } from '@hallmark/event-store';
import { describe, expect, it } from 'vitest';
import { messageIdOf } from './outbox.ts';
import { eventMessages, eventTypesWithMessages, scanMessages } from './sources.ts';

const chained = (type: string, data: Record<string, unknown>, eventId = 'e1'): StoredEvent => ({
  eventId,
  streamId: 'asset-obj_1',
  streamVersion: 2,
  globalPosition: 7,
  type,
  data,
  metadata: { provenance: { assetId: 'obj_1', accountId: 'acc_1', environment: 'live', sequence: 2, prevHash: 'a', hash: 'b' } },
  recordedAt: '2026-11-25T06:00:00.000Z',
});

describe('webhook messages from their causes', () => {
  it('turns sold/transferred into transfer.completed and transfer_locked into transfer.locked, for the asset’s account', () => {
    const sold = eventMessages(chained('sold', { transferId: 't1', fromOwnerId: 'a', toOwnerId: 'b', salePrice: 10 }));
    expect(sold).toEqual([
      expect.objectContaining({
        accountId: 'acc_1',
        environment: 'live',
        type: 'transfer.completed',
        cause: 'event:e1',
        data: expect.objectContaining({ assetId: 'obj_1', kind: 'sold', transferId: 't1' }),
      }),
    ]);
    expect(eventMessages(chained('transfer_locked', { transferId: 't1' }, 'e2'))[0]?.type).toBe('transfer.locked');
    expect(eventMessages(chained('transfer_cancelled', { transferId: 't1' }, 'e3'))[0]).toMatchObject({
      type: 'transfer.cancelled',
      data: { transferId: 't1' },
    });
    expect(eventMessages(chained('transfer_initiated', { transferId: 't1' }))).toEqual([]);
  });

  it('turns a confirmed report and a blocklist entry into code.blocked', () => {
    const confirmed = eventMessages(chained('code.report-confirmed', { reportId: 'r1', gtin: 'g', serial: 's', reason: 'fake' }));
    expect(confirmed[0]).toMatchObject({ type: 'code.blocked', data: { source: 'report', reportId: 'r1', reason: 'fake' } });
    const blocked = eventMessages({
      ...chained('code.blocked', { blockId: 'blk_1', gtin: 'g', serialFrom: '1', serialTo: '9', by: 'key_1' }),
      streamId: 'account-acc_2-test',
      metadata: {},
    });
    expect(blocked[0]).toMatchObject({
      accountId: 'acc_2',
      environment: 'test',
      type: 'code.blocked',
      data: { source: 'blocklist' },
    });
    expect(blocked[0]?.data).not.toHaveProperty('by');
  });

  it('turns a lifted report and a removed blocklist entry into code.unblocked', () => {
    const lifted = eventMessages(
      chained('code.report-lifted', { reportId: 'r1', gtin: 'g', serial: 's', reason: 'our mistake', liftedBy: 'key_1' }),
    );
    expect(lifted).toEqual([
      expect.objectContaining({
        type: 'code.unblocked',
        data: { source: 'report', assetId: 'obj_1', reportId: 'r1', gtin: 'g', serial: 's', reason: 'our mistake' },
      }),
    ]);
    const removed = eventMessages({
      ...chained('code.unblocked', {
        blockId: 'blk_1',
        gtin: 'g',
        serialFrom: '1',
        serialTo: '9',
        status: 'removed',
        by: 'key_1',
      }),
      streamId: 'account-acc_2-live',
      metadata: {},
    });
    expect(removed).toEqual([
      expect.objectContaining({
        accountId: 'acc_2',
        environment: 'live',
        type: 'code.unblocked',
        data: { source: 'blocklist', blockId: 'blk_1', gtin: 'g', serialFrom: '1', serialTo: '9', status: 'removed' },
      }),
    ]);
    // Both are among the types the outbox's subscription reads.
    expect(eventTypesWithMessages).toEqual(expect.arrayContaining(['code.report-lifted', 'code.unblocked']));
  });

  it('turns a filed report (code.reported in the owner’s account stream) into code.reported, one message id per report', () => {
    const reported = eventMessages({
      ...chained('code.reported', { reportId: 'rep_1', assetId: 'code_1', gtin: 'g', serial: 's', reason: 'odd', source: 'api' }),
      streamId: 'account-acc_3-live',
      metadata: {},
    });
    expect(reported).toEqual([
      expect.objectContaining({
        accountId: 'acc_3',
        environment: 'live',
        type: 'code.reported',
        cause: 'report:rep_1',
        data: { reportId: 'rep_1', assetId: 'code_1', gtin: 'g', serial: 's', reason: 'odd' },
      }),
    ]);
  });

  it('sends suspicious and counterfeit scans of an account’s codes only, with an id made from the scan', () => {
    const base = {
      environment: 'live' as const,
      gtin: 'g',
      serial: 's',
      riskIndicators: [],
      scanNumber: 1,
      at: '2026-11-25T06:00:00.000Z',
    };
    const messages = scanMessages([
      { ...base, scanId: 'a', verdict: 'SUSPICIOUS', accountId: 'acc_1' },
      { ...base, scanId: 'b', verdict: 'COUNTERFEIT', accountId: 'acc_1' },
      { ...base, scanId: 'c', verdict: 'AUTHENTIC', accountId: 'acc_1' },
      { ...base, scanId: 'd', verdict: 'COUNTERFEIT' },
    ]);
    expect(messages.map((message) => message.type)).toEqual(['scan.suspicious', 'scan.counterfeit']);
    expect(messageIdOf(messages[0]?.cause ?? '')).toBe(messageIdOf('scan:a'));
    expect(messageIdOf('scan:a')).not.toBe(messageIdOf('scan:b'));
  });

  it('sends a forged link’s scan.counterfeit after the endpoint’s others, and a blocklisted clone’s in due order', () => {
    const base = { environment: 'live' as const, gtin: 'g', serial: 's', scanNumber: 1, at: '2026-11-25T06:00:00.000Z' };
    const messages = scanMessages([
      // Its signature failed: no risk indicator (risk.ts).
      { ...base, scanId: 'forged', verdict: 'COUNTERFEIT', accountId: 'acc_1', riskIndicators: [] },
      { ...base, scanId: 'clone', verdict: 'COUNTERFEIT', accountId: 'acc_1', riskIndicators: ['KNOWN_COUNTERFEIT_PATTERN'] },
      { ...base, scanId: 'cloned', verdict: 'SUSPICIOUS', accountId: 'acc_1', riskIndicators: [] },
    ]);
    expect(messages.map((message) => [message.cause, message.deferred])).toEqual([
      ['scan:forged', true],
      ['scan:clone', false],
      ['scan:cloned', false],
    ]);
  });
});
