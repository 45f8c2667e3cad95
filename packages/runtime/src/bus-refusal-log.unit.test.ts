import { describe, expect, it } from 'vitest';
import { refusalLogger } from './bus-refusal-log.ts';
import { createLogger } from './logger.ts';

function capturedLog() {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({
    service: 'test',
    instance: 'test-1',
    level: 'info',
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { log, lines };
}

describe('warnings of refused bus requests', () => {
  it('warn with the subject, request id and reason', () => {
    const { log, lines } = capturedLog();
    refusalLogger(log)({ kind: 'request', subject: 'rpc.code-service.generateCode', requestId: 'req-1', reason: 'missing' });
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: 'refused a bus request without a valid signature',
        subject: 'rpc.code-service.generateCode',
        requestId: 'req-1',
        reason: 'missing',
      }),
    ]);
  });

  it('write at most 10 lines a second under a flood, and say how many were left out', () => {
    const { log, lines } = capturedLog();
    let now = 0;
    const refused = refusalLogger(log, () => now);
    for (let i = 0; i < 1_000; i++) refused({ kind: 'request', subject: 's', requestId: `r${i}`, reason: 'mismatch' });
    expect(lines).toHaveLength(10);
    now = 1_000;
    refused({ kind: 'event', subject: 's', requestId: 'later', reason: 'expired' });
    expect(lines).toHaveLength(11);
    expect(lines.at(-1)).toMatchObject({ requestId: 'later', reason: 'expired', omitted: 990 });
  });

  it('say which kind of message was dropped: a reply, an event or a broadcast', () => {
    const { log, lines } = capturedLog();
    const refused = refusalLogger(log);
    refused({ kind: 'reply', subject: 'rpc.verify-service.verify', requestId: 'req-2', reason: 'mismatch' });
    refused({ kind: 'event', subject: 'scans.recorded', requestId: '', reason: 'missing' });
    refused({ kind: 'broadcast', subject: 'codes.code-blocked', requestId: '', reason: 'expired' });
    expect(lines).toEqual([
      expect.objectContaining({ msg: 'dropped a bus reply without a valid signature', kind: 'reply', reason: 'mismatch' }),
      expect.objectContaining({ msg: 'dropped a bus event without a valid signature', kind: 'event', subject: 'scans.recorded' }),
      expect.objectContaining({ msg: 'dropped a bus broadcast without a valid signature', kind: 'broadcast', reason: 'expired' }),
    ]);
  });
});
