import { type AddressInfo, connect, createServer, type Socket } from 'node:net';

/**
 * A TCP relay on loopback in front of a real server (Redis, PostgreSQL, NATS), which can go silent: from
 * then on, the connections it holds carry nothing either way and stay open, and new ones are
 * accepted and carry nothing, as a server that hangs or a network that drops packets looks to a
 * client (no reset, no answer). `speak()` lets new connections through again; the silent ones stay
 * silent, as a half-open connection would.
 */
export interface SilentLink {
  port: number;
  silence(): void;
  speak(): void;
  /**
   * Holds what the open connections carry, either way, until `release()` delivers it in order: a
   * message on its way but late (a bus message delayed in the network), not lost.
   */
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

export async function startSilentLink(target: { host: string; port: number }): Promise<SilentLink> {
  let silent = false;
  // What the held connections sent, in order, with where it goes.
  let held: Array<{ to: Socket; chunk: Buffer }> | undefined;
  const pass = (to: Socket, chunk: Buffer) => {
    if (held) held.push({ to, chunk });
    else to.write(chunk);
  };
  const pairs = new Set<{ client: Socket; server?: Socket; silenced: boolean }>();
  const relay = createServer((client) => {
    const pair: { client: Socket; server?: Socket; silenced: boolean } = { client, silenced: silent };
    pairs.add(pair);
    const forget = () => {
      pairs.delete(pair);
      client.destroy();
      pair.server?.destroy();
    };
    client.on('error', forget).on('close', forget);
    // Held, not read: what a silenced client sends goes nowhere.
    if (pair.silenced) return;
    const server = connect(target.port, target.host);
    pair.server = server;
    server.on('error', forget).on('close', forget);
    client.on('data', (chunk: Buffer) => {
      if (!pair.silenced) pass(server, chunk);
    });
    server.on('data', (chunk: Buffer) => {
      if (!pair.silenced) pass(client, chunk);
    });
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    port: (relay.address() as AddressInfo).port,
    silence() {
      silent = true;
      for (const pair of pairs) pair.silenced = true;
    },
    speak() {
      silent = false;
    },
    hold() {
      held ??= [];
    },
    release() {
      const queued = held ?? [];
      held = undefined;
      for (const { to, chunk } of queued) if (!to.destroyed) to.write(chunk);
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.server?.destroy();
      }
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    },
  };
}
