import { JetStreamApiError, type JetStreamManager, type StreamInfo } from '@nats-io/jetstream';

/** A stream's name for a prefix: `<PREFIX>_<SUFFIX>`, the prefix's other characters as `_`. */
export function streamNameOf(prefix: string, suffix: string): string {
  return `${prefix.replace(/[^A-Za-z0-9]/g, '_').toUpperCase()}_${suffix}`;
}

/** A stream as this version wants it: its subject, its limits and at least `replicas` copies. */
export interface StreamPlan {
  name: string;
  subject: string;
  limits: { max_age: number; max_bytes: number; max_msgs_per_subject?: number };
  replicas: number;
}

/**
 * Creates the stream unless it exists, and gives an existing one this version's limits and at
 * least the copies asked for (a stream made by an older version, or by hand, keeps its other
 * settings). Processes starting together race here: a lost race is fine. A number of copies the
 * server cannot keep (more than its JetStream servers) fails with NATS's reason, named.
 */
export async function ensureStream(jsm: JetStreamManager, plan: StreamPlan): Promise<void> {
  try {
    await ensureStreamOf(jsm, plan);
  } catch (error) {
    if (plan.replicas > 1 && error instanceof JetStreamApiError) {
      throw new Error(
        `JetStream cannot keep ${plan.replicas} copies of the stream ${plan.name} (HALLMARK_NATS_STREAM_REPLICAS): ${error.message}`,
        { cause: error },
      );
    }
    throw error;
  }
}

async function ensureStreamOf(jsm: JetStreamManager, { name, subject, limits, replicas }: StreamPlan): Promise<void> {
  let existing: StreamInfo | undefined;
  try {
    existing = await jsm.streams.info(name);
  } catch (error) {
    if (!(error instanceof JetStreamApiError)) throw error;
  }
  if (existing) {
    // More copies are made when asked for; fewer never (a stream an operator made with more keeps them).
    const config = existing.config;
    const copies = Math.max(config.num_replicas ?? 1, replicas);
    const differs = Object.entries(limits).some(([key, value]) => config[key as keyof typeof limits] !== value);
    if (differs || copies !== config.num_replicas) await jsm.streams.update(name, { ...limits, num_replicas: copies });
    return;
  }
  for (let attempt = 1; ; attempt += 1) {
    try {
      await jsm.streams.add({ name, subjects: [subject], ...limits, num_replicas: replicas });
      return;
    } catch (error) {
      const existsNow = await jsm.streams.info(name).then(
        () => true,
        () => false,
      );
      if (existsNow) return;
      // A new server's first streams, made at once, can race in its store: "could not create
      // storage directory" (err_code 10077) for one of them (seen in CI, 2026-12-06). Tried again.
      if (attempt >= streamAddAttempts || !(error instanceof JetStreamApiError)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
}

/** How many times a stream's creation is tried before its failure is the process's. */
const streamAddAttempts = 3;
