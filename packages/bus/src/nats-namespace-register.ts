import { JetStreamApiError, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NamespaceRegister } from './namespace-register.ts';

/** The stream that keeps a prefix's installation claim. */
export function claimStreamName(prefix: string): string {
  return `${prefix.replace(/[^A-Za-z0-9]/g, '_').toUpperCase()}_INSTALLATION`;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The claim on NATS: a JetStream stream of one subject (`<prefix>.installation`) that keeps one
 * message, the installation's id, for `ttlMs` after it was written. A claim is a publish that
 * expects no message on the subject, so of two installations claiming at once one wins.
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
  return {
    async holder() {
      const stored = await jsm.streams.getMessage(stream, { last_by_subj: subject });
      return stored ? decoder.decode(stored.data) : undefined;
    },
    async claim(installation) {
      try {
        await js.publish(subject, encoder.encode(installation), { expect: { lastSubjectSequence: 0 } });
        return true;
      } catch (error) {
        if (error instanceof JetStreamApiError) return false; // a claim is current
        throw error;
      }
    },
    async renew(installation) {
      await js.publish(subject, encoder.encode(installation));
    },
  };
}
