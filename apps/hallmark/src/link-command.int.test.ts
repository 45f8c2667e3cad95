// `hallmark` on the PATH after the install (apps/hallmark/scripts/link-command.mjs, run by the root's
// postinstall): run as the install runs it, with a HOME and PATH of the test's own, then the command
// is called by name from another folder.
import { spawnSync } from 'node:child_process';
import {
  chownSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../scripts/link-command.mjs', import.meta.url));
const target = fileURLToPath(new URL('../bin/hallmark.js', import.meta.url));
const nodeFolder = join(process.execPath, '..');

let home: string;
let bin: string;
const env = (extra: Record<string, string> = {}) => ({
  HOME: home,
  PATH: [bin, nodeFolder, '/usr/bin', '/bin'].join(':'),
  ...extra,
});
const runScript = (extra: Record<string, string> = {}) =>
  spawnSync(process.execPath, [script], { env: env(extra), encoding: 'utf8', timeout: 30_000 });

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'hallmark-home-'));
  bin = join(home, '.local', 'bin');
  mkdirSync(bin, { recursive: true });
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe('hallmark on the PATH after the install', () => {
  it('links the command into ~/.local/bin, and it answers by name from another folder', () => {
    const linked = runScript();
    expect(linked.status, linked.stderr).toBe(0);
    expect(linked.stdout).toContain(`linked ${join(bin, 'hallmark')}`);
    expect(readlinkSync(join(bin, 'hallmark'))).toBe(target);
    const called = spawnSync('hallmark', ['--version'], { env: env(), cwd: home, encoding: 'utf8', timeout: 60_000 });
    expect(called.status, called.stderr).toBe(0);
    expect(called.stdout).toMatch(/^hallmark \d+\.\d+\.\d+/);
    // Again: nothing to change.
    expect(runScript().stdout).toContain(`on the PATH at ${join(bin, 'hallmark')}`);
  });

  it('points its own link from another (deleted) checkout here, and never replaces a hallmark it did not make', () => {
    symlinkSync('/gone/checkout/apps/hallmark/bin/hallmark.js', join(bin, 'hallmark'));
    expect(runScript().stdout).toContain('linked');
    expect(readlinkSync(join(bin, 'hallmark'))).toBe(target);

    rmSync(join(bin, 'hallmark'));
    writeFileSync(join(bin, 'hallmark'), '#!/bin/sh\necho someone else\n', { mode: 0o755 });
    const left = runScript();
    expect(left.status).toBe(0);
    expect(left.stdout).toContain('is not ours; left alone');
    expect(lstatSync(join(bin, 'hallmark')).isSymbolicLink()).toBe(false);
  });

  it.runIf(process.getuid?.() === 0)('run as root, links no checkout that another user owns', () => {
    // A checkout of user 1000's: its script and bin, as the install would run them.
    const checkout = join(home, 'their-clone');
    mkdirSync(join(checkout, 'apps', 'hallmark', 'bin'), { recursive: true });
    mkdirSync(join(checkout, 'apps', 'hallmark', 'scripts'), { recursive: true });
    writeFileSync(join(checkout, 'apps', 'hallmark', 'bin', 'hallmark.js'), '#!/usr/bin/env node\n', { mode: 0o755 });
    copyFileSync(script, join(checkout, 'apps', 'hallmark', 'scripts', 'link-command.mjs'));
    for (const path of [checkout, join(checkout, 'apps'), join(checkout, 'apps', 'hallmark')]) chownSync(path, 1000, 1000);
    const refused = spawnSync(process.execPath, [join(checkout, 'apps', 'hallmark', 'scripts', 'link-command.mjs')], {
      env: env(),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(refused.status).toBe(0);
    expect(refused.stdout).toContain('checkout another user owns');
    expect(() => lstatSync(join(bin, 'hallmark'))).toThrow();
  });

  it('links nothing with HALLMARK_LINK_COMMAND=0, or where no such folder is on the PATH, and never fails the install', () => {
    const skipped = runScript({ HALLMARK_LINK_COMMAND: '0' });
    expect(skipped.status).toBe(0);
    expect(skipped.stdout).toContain('HALLMARK_LINK_COMMAND=0');
    const nowhere = spawnSync(process.execPath, [script], {
      env: { HOME: home, PATH: '/usr/bin:/bin' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(nowhere.status).toBe(0);
    expect(nowhere.stdout).toContain('no folder on the PATH');
    expect(() => lstatSync(join(bin, 'hallmark'))).toThrow();
  });
});
