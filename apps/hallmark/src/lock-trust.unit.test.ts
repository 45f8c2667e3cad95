import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type LockHolder, lockFileOf, whyNotTrusted } from './data-dir-lock.ts';

// The hallmark command sends a key to the URL a data folder's lock file names: only when a server of
// this user wrote it (mode 0600, its own live process) and the address is this machine's loopback.
describe('whyNotTrusted', () => {
  let dataDir: string | undefined;
  afterEach(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });
  const planted = async (holder: LockHolder, mode = 0o600) => {
    dataDir = await mkdtemp(join(tmpdir(), 'hallmark-lock-trust-'));
    await writeFile(lockFileOf(dataDir), JSON.stringify(holder), { mode });
    await chmod(lockFileOf(dataDir), mode);
    return dataDir;
  };
  const ours = { pid: process.pid, holder: 'server' as const, startedAt: new Date().toISOString() };

  it('trusts a lock a server of ours writes: mode 0600, a live process of this user, a loopback address', async () => {
    for (const url of ['http://localhost:8080', 'http://127.0.0.1:8080', 'http://[::1]:8080']) {
      const folder = await planted({ ...ours, url });
      expect(await whyNotTrusted(folder, { ...ours, url }), url).toBeUndefined();
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('sends nothing to another machine, whatever else holds', async () => {
    const holder = { ...ours, url: 'http://attacker.example:1234' };
    expect(await whyNotTrusted(await planted(holder), holder)).toMatch(/not this machine's loopback/);
  });

  it('refuses a lock others may write (a checkout, an archive, a shared folder)', async () => {
    const holder = { ...ours, url: 'http://localhost:8080' };
    expect(await whyNotTrusted(await planted(holder, 0o644), holder)).toMatch(/mode 644/);
  });

  it('refuses a lock whose process is gone', async () => {
    const holder = { ...ours, pid: 2 ** 22 + 12_345, url: 'http://localhost:8080' };
    expect(await whyNotTrusted(await planted(holder), holder)).toMatch(/is not one of this user's/);
  });
});
