// Crash losses of the embedded form (from a review of 2026-12-05; `pnpm test:long`): blocks and unblocks answered before a
// SIGKILL of the real `hallmark start` are all there after it starts again on the same folder, and
// the blocked codes verify SUSPICIOUS (verify-service's in-memory blocks are read again).
import { gs1CheckDigit } from '@hallmark/gs1';
import { afterEach, describe, expect, it } from 'vitest';
import { api, cleanUp, type Json, kill, newDataDir, ok, startServer, tenant } from '../support/killed-product.ts';
import { waitFor } from '../support/wait.ts';

afterEach(cleanUp);

const gtinBody = '0950600078001';
const gtin = `${gtinBody}${gs1CheckDigit(gtinBody)}`;

describe('the embedded form killed mid-way through blocks and unblocks', () => {
  it('keeps every block and unblock answered before the kill, and verifies blocked codes SUSPICIOUS', async () => {
    const dataDir = await newDataDir();
    const first = await startServer(dataDir);
    const { key } = await tenant(first.url, dataDir, 'enterprise', gtin);
    const code = ok(await api(first.url, key, 'POST', '/code/generate', { gtin, serialNumber: 'BLK-0' }), 201);
    const blocked = new Map<string, string>(); // serial -> blockId, answered 201
    const removed = new Set<string>(); // blockIds answered 200 removed
    let stop = false;
    let n = 0;
    const workers = Array.from({ length: 6 }, async (_, w) => {
      while (!stop) {
        try {
          const serial = `BLK-${w}-${n++}`;
          const answer = await api(first.url, key, 'POST', '/blocklist', { gtin, serial, kind: 'withdrawn', reason: serial });
          if (answer.status !== 201) throw new Error(`block ${answer.status} ${JSON.stringify(answer.body)}`);
          blocked.set(serial, answer.body.blockId);
          if (n % 3 === 0) {
            const gone = await api(first.url, key, 'DELETE', `/blocklist/${answer.body.blockId}`);
            if (gone.status !== 200) throw new Error(`unblock ${gone.status} ${JSON.stringify(gone.body)}`);
            removed.add(answer.body.blockId);
          }
        } catch (error) {
          if (!stop && !String(error).includes('fetch failed')) throw error;
          return;
        }
      }
    });
    // The generated code blocked too, just before the kill.
    await waitFor('60 blocks', async () => (blocked.size >= 60 ? true : undefined), { timeoutMs: 30_000, intervalMs: 5 });
    const own = ok(await api(first.url, key, 'POST', '/blocklist', { gtin, serial: 'BLK-0', kind: 'withdrawn' }), 201);
    await kill(first);
    stop = true;
    await Promise.all(workers);

    const second = await startServer(dataDir);
    const listed = new Map<string, Json>();
    for (const status of ['active', 'removed']) {
      let cursor: string | undefined;
      for (;;) {
        const page = ok(
          await api(
            second.url,
            key,
            'GET',
            `/blocklist?status=${status}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          ),
        );
        for (const block of page.data ?? page.blocks ?? []) listed.set(block.blockId, block);
        cursor = page.nextCursor ?? page.pagination?.nextCursor ?? undefined;
        if (!cursor) break;
      }
    }
    const problems: string[] = [];
    for (const [serial, blockId] of [...blocked, ['BLK-0', own.blockId] as const]) {
      const block = listed.get(blockId);
      const want = removed.has(blockId) ? 'removed' : 'active';
      if (!block) problems.push(`${serial}: block ${blockId} answered 201 is gone`);
      else if (block.status !== want) problems.push(`${serial}: ${block.status}, answered ${want}`);
    }
    const verdict = ok(await api(second.url, key, 'POST', '/code/verify', { url: code.url }));
    if (verdict.verdict !== 'SUSPICIOUS') problems.push(`blocked code verified ${verdict.verdict}`);
    expect(problems, `blocks ${blocked.size}, removals ${removed.size}, listed ${listed.size}`).toEqual([]);
    await kill(second);
  }, 90_000);
});
