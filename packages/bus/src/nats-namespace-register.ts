import { JetStreamApiCodes, JetStreamApiError, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NamespaceRegister } from './namespace-register.ts';

/** The stream that keeps a prefix's installation claim. */
export function claimStreamName(prefix: string): string {
  return `${prefix.replace(/[^A-Za-z0-9]/g, '_').toUpperCase()}_INSTALLATION`;
}

/** A read or write refused because the stream does not exist. */
const isStreamNotFound = (error: unknown) =>
  error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The claim on NATS: a JetStream stream of one subject (`<prefix>.installation`) that keeps one
 * message, the installation's id, for `ttlMs` after it was written. A claim is a publish that
 * expects no message on the subject, so of two installations claiming at once one wins. A stream
 * that is gone (deleted, or a NATS restarted without its store) is made again by the next call.
 */
export async function openNatsNamespaceRegister(
  jsm: JetStreamManager,
  js: JetStreamClient,
  prefix: string,
  options: { ttlMs: number; replicas: number },
): Promise<NamespaceRegister> {
  const stream = claimStreamName(prefix);
  const subject = `${prefix}.installation`;
  const config = { max_msgs_per_subject: 1, max_age: options.ttlMs * 1e6, num_replicas: options.replicas };
  const ensureStream = async () => {
    try {
      await jsm.streams.add({ name: stream, subjects: [subject], ...config });
    } catch (error) {
      // Another process of this or another installation made it first: it is the same stream.
      const exists = await jsm.streams.info(stream).then(
        () => true,
        () => false,
      );
      if (!exists) throw error;
    }
  };
  /** Runs `work`; if it failed for want of the stream (a publish nobody stores, a read of no stream), makes it and runs it once more. */
  const withStream = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      const streamGone = isStreamNotFound(error) || !(error instanceof JetStreamApiError);
      if (!streamGone) throw error;
      await ensureStream();
      return work();
    }
  };
  await ensureStream();
  const publish = (installation: string, expectNone: boolean) =>
    js.publish(subject, encoder.encode(installation), expectNone ? { expect: { lastSubjectSequence: 0 } } : {});
  return {
    holder: () =>
      withStream(async () => {
        const stored = await jsm.streams.getMessage(stream, { last_by_subj: subject });
        return stored ? decoder.decode(stored.data) : undefined;
      }),
    claim: (installation) =>
      withStream(async () => {
        try {
          await publish(installation, true);
          return true;
        } catch (error) {
          // A claim is current (wrong last sequence); anything else is withStream's to judge.
          if (error instanceof JetStreamApiError && !isStreamNotFound(error)) return false;
          throw error;
        }
      }),
    renew: async (installation) => {
      await withStream(() => publish(installation, false));
    },
  };
}
