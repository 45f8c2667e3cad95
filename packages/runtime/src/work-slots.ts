import { HallmarkError } from '@hallmark/contracts';

export interface WorkSlots {
  /**
   * Runs `work` when one of the slots is free, waiting in a short queue for one; fails with
   * SERVICE_UNAVAILABLE (`details.retryAfterSeconds`) when the queue is full too.
   */
  run<T>(work: () => Promise<T>): Promise<T>;
}

/**
 * A bound on costly work a process does at once (decoding photos, holding uploads in memory): a
 * burst waits in a short queue or is told to come back (`busy` names what is busy), instead of
 * exhausting the process.
 */
export function createWorkSlots(limits: {
  running: number;
  waiting: number;
  retryAfterSeconds: number;
  busy: string;
}): WorkSlots {
  let running = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  };
  return {
    async run(work) {
      if (running >= limits.running) {
        if (waiting.length >= limits.waiting) {
          throw new HallmarkError('SERVICE_UNAVAILABLE', `${limits.busy}; retry in a moment.`, {
            retryAfterSeconds: limits.retryAfterSeconds,
          });
        }
        // The slot is handed over by release(): `running` stays as it is.
        await new Promise<void>((resolve) => waiting.push(resolve));
      } else {
        running += 1;
      }
      try {
        return await work();
      } finally {
        release();
      }
    },
  };
}
