import { JetStreamApiCodes, JetStreamApiError, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NamespaceRegister } from './namespace-register.ts';
import { ensureStream, streamNameOf } from './nats-streams.ts';

/** The stream that keeps a prefix's installation claim. */
export function claimStreamName(prefix: string): string {
  return streamNameOf(prefix, 'INSTALLATION');
}

/** A read or write refused because the stream does not exist. */
const isStreamNotFound = (error: unknown) =>
  error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The claim on NATS: a JetStream stream of one subject (`<prefix>.installation`) that keeps one
 * message, the installation's id, for `ttlMs` after it was written. Every write expects the
 * subject's last sequence it read (none, to claim), so a claim is never written over another
 * installation's, and of two installations claiming at once one wins. A stream that is gone
 * (deleted, or a NATS restarted without its store) is made again by the next call.
 */
export async function openNatsNamespaceRegister(
  jsm: JetStreamManager,
  js: JetStreamClient,
  prefix: string,
  options: { ttlMs: number; replicas: number },
): Promise<NamespaceRegister> {
  const stream = claimStreamName(prefix);
  const subject = `${prefix}.installation`;
  const plan = {
    name: stream,
    subject,
    // One small message; a bound all the same, as NATS accounts that require one on every stream refuse a stream without.
    limits: { max_age: options.ttlMs * 1e6, max_bytes: 64 * 1024, max_msgs_per_subject: 1 },
    replicas: options.replicas,
  };
  /** Runs `work`; if it failed for want of the stream (a publish nobody stores, a read of no stream), makes it and runs it once more. */
  const withStream = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      const streamGone = isStreamNotFound(error) || !(error instanceof JetStreamApiError);
      if (!streamGone) throw error;
      await ensureStream(jsm, plan);
      return work();
    }
  };
  const last = async () => {
    const stored = await jsm.streams.getMessage(stream, { last_by_subj: subject });
    return stored ? { holder: decoder.decode(stored.data), sequence: stored.seq } : undefined;
  };
  await ensureStream(jsm, plan);
  return {
    holder: () => withStream(async () => (await last())?.holder),
    hold: (installation) =>
      withStream(async () => {
        const current = await last();
        if (current && current.holder !== installation) return { outcome: 'taken', holder: current.holder };
        try {
          await js.publish(subject, encoder.encode(installation), { expect: { lastSubjectSequence: current?.sequence ?? 0 } });
          return { outcome: current ? 'renewed' : 'claimed' };
        } catch (error) {
          if (!(error instanceof JetStreamApiError) || isStreamNotFound(error)) throw error;
          // Written by someone else since the read: another installation's claim, or this one's from a sibling process.
          const now = await last();
          return now && now.holder !== installation ? { outcome: 'taken', holder: now.holder } : { outcome: 'renewed' };
        }
      }),
    release: (installation) =>
      withStream(async () => {
        const current = await last();
        if (current?.holder === installation) await jsm.streams.purge(stream, { filter: subject, seq: current.sequence + 1 });
      }),
  };
}
