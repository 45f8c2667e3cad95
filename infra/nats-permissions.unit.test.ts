// The broadcasts each NATS user may send and listen to (infra/nats-permissions.ts) are those its
// sources send and listen to: one missing would be a broadcast refused by nats-server (a cache left
// stale, a confirmed counterfeit not blocked on every replica until the epochs catch up), one too
// many a right a leaked password should not have.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { broadcasts } from '@hallmark/contracts';
import { describe, expect, it } from 'vitest';
import { accessOf, type BroadcastName, type NatsUser, natsPermissions, natsUsers } from './nats-permissions.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The workspace's packages (not services or apps) by package name: what a process's sources include besides its own. */
const packageDirs = new Map(
  readdirSync(join(root, 'packages')).map((dir) => {
    const { name } = JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as { name: string };
    return [name, join(root, 'packages', dir)] as const;
  }),
);

const dependenciesOf = (dir: string): string[] =>
  Object.keys(
    (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {},
  );

/** A process's own source folder and every workspace package it reaches. The CLI's service dependencies are its embedded `start`, which speaks no NATS. */
function sourceDirsOf(user: NatsUser): string[] {
  const own = join(root, user === 'hallmark-cli' ? 'apps/hallmark' : `services/${user}`);
  const seen = new Set<string>([own]);
  const queue = [own];
  while (queue.length > 0) {
    for (const name of dependenciesOf(queue.pop() as string)) {
      const dir = packageDirs.get(name);
      if (dir && !seen.has(dir)) {
        seen.add(dir);
        queue.push(dir);
      }
    }
  }
  return [...seen].map((dir) => join(dir, 'src'));
}

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !/\.test\.ts$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));

/** The broadcasts `user`'s sources send (`.broadcast(broadcasts.x`) and listen to (`onBroadcast(broadcasts.x`). */
function broadcastsInSources(user: NatsUser) {
  const sends = new Set<string>();
  const hears = new Set<string>();
  const unnamed: string[] = [];
  for (const file of sourceDirsOf(user).flatMap(sourceFiles)) {
    // The bus adapters themselves take any subject; they are what the calls go through.
    if (file.includes(join('packages', 'bus', 'src'))) continue;
    const text = readFileSync(file, 'utf8');
    for (const [, kind, name] of text.matchAll(/\b(broadcast|onBroadcast)\(\s*(?:broadcasts\.(\w+))?/g)) {
      if (!name) unnamed.push(`${file.slice(root.length)}: ${kind}(…) with a subject not from contracts' broadcasts`);
      else (kind === 'broadcast' ? sends : hears).add(name);
    }
  }
  return { sends: [...sends].sort(), hears: [...hears].sort(), unnamed };
}

describe('each NATS user’s broadcasts', () => {
  for (const user of natsUsers) {
    it(`${user}: sends and hears what its sources do, no more`, () => {
      const found = broadcastsInSources(user);
      expect(found.unnamed).toEqual([]);
      const declared = accessOf(user);
      expect([...declared.sends].sort(), 'sends').toEqual(found.sends);
      expect([...declared.hears].sort(), 'hears').toEqual(found.hears);
    });
  }

  it('every broadcast has a sender and a listener', () => {
    const names = Object.keys(broadcasts) as BroadcastName[];
    for (const name of names) {
      expect(
        natsUsers.filter((user) => accessOf(user).sends.includes(name)),
        `${name}'s senders`,
      ).not.toEqual([]);
      expect(
        natsUsers.filter((user) => accessOf(user).hears.includes(name)),
        `${name}'s listeners`,
      ).not.toEqual([]);
    }
  });

  it('renders them as subjects: a broadcast only its senders may publish, only its listeners read', () => {
    const blocked = `hallmark.${broadcasts.codeBlocked}`;
    const publishers = natsUsers.filter((user) => natsPermissions('hallmark', user).publish.includes(blocked));
    const readers = natsUsers.filter((user) => natsPermissions('hallmark', user).subscribe.includes(blocked));
    expect(publishers).toEqual(['verify-service']);
    expect(readers).toEqual(['verify-service']);
    // No wildcard lets another user reach it.
    for (const user of natsUsers) {
      const { publish, subscribe } = natsPermissions('hallmark', user);
      expect([...publish, ...subscribe].filter((subject) => subject === '>' || subject.startsWith('hallmark.>'))).toEqual([]);
    }
  });
});
