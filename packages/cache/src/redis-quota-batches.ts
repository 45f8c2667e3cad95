import { counterState, type QuotaCounter, type QuotaDecision } from './cache.ts';

/**
 * Spends the quotas of several requests in order, each all or nothing, as one script call.
 * ARGV: the number of requests, then for each: its number of counters n, then for each counter
 * its KEYS index, cost, limit and expiry (Unix ms). Returns, for each request: the index of the
 * counter that refused it (0 when spent), then each counter's count after the request. A counter
 * of cost 0 is read, not written (no key made).
 */
export const consumeQuotaBatchScript = `
local result = {}
local at = 2
for _ = 1, tonumber(ARGV[1]) do
  local n = tonumber(ARGV[at])
  at = at + 1
  local used = {}
  local refused = 0
  for i = 1, n do
    local base = at + (i - 1) * 4
    used[i] = tonumber(redis.call('GET', KEYS[tonumber(ARGV[base])]) or '0')
    if refused == 0 and used[i] + tonumber(ARGV[base + 1]) > tonumber(ARGV[base + 2]) then refused = i end
  end
  result[#result + 1] = refused
  for i = 1, n do
    local base = at + (i - 1) * 4
    if refused == 0 and tonumber(ARGV[base + 1]) > 0 then
      local key = KEYS[tonumber(ARGV[base])]
      used[i] = redis.call('INCRBY', key, ARGV[base + 1])
      redis.call('PEXPIREAT', key, ARGV[base + 3])
    end
    result[#result + 1] = used[i]
  end
  at = at + n * 4
end
return result`;

/** Runs consumeQuotaBatchScript with these KEYS and ARGV. */
export type RunQuotaBatch = (keys: string[], args: Array<string | number>) => Promise<number[]>;

interface Waiting {
  counters: readonly QuotaCounter[];
  resolve(decision: QuotaDecision): void;
  reject(error: unknown): void;
}

const maxBatch = 256;

/**
 * The Redis Cluster hash tag all of a request's counter keys share (the text between the first `{`
 * and the next `}`), or undefined when they do not share one. Only requests whose keys lie in one
 * slot can go in one script call.
 */
function sharedHashTag(counters: readonly QuotaCounter[]): string | undefined {
  let shared: string | undefined;
  for (const { key } of counters) {
    const open = key.indexOf('{');
    const close = open < 0 ? -1 : key.indexOf('}', open + 1);
    if (close <= open + 1) return undefined;
    const tag = key.slice(open + 1, close);
    if (shared !== undefined && tag !== shared) return undefined;
    shared = tag;
  }
  return shared;
}

function decisionOf(counters: readonly QuotaCounter[], refused: number, used: readonly number[]): QuotaDecision {
  const allowed = refused === 0;
  return {
    allowed,
    refusedIndex: allowed ? undefined : refused - 1,
    counters: counters.map((counter, index) => counterState(counter, used[index] ?? 0)),
  };
}

/**
 * consumeQuotas over Redis, one script call per batch: while a call for one hash tag (one account's
 * counters in one environment, which all its keys spend on) is in flight, the requests that arrive
 * for it wait and leave together in the next call. Under load a busy account's requests cost one
 * round trip and one script run per batch instead of one each; alone, a request leaves at once.
 * Requests in a batch may spend on different counters (a verify, a generate, a plain read); the
 * script runs them in arrival order, each all or nothing, so counts stay exact.
 */
export function createQuotaBatches(run: RunQuotaBatch): (counters: readonly QuotaCounter[]) => Promise<QuotaDecision> {
  /** Requests waiting per hash tag; a tag is present while a call for it is in flight. */
  const waitingByTag = new Map<string, Waiting[]>();

  const send = (batch: readonly Waiting[], tag: string | undefined): void => {
    const keyIndexes = new Map<string, number>();
    const args: Array<string | number> = [batch.length];
    for (const { counters } of batch) {
      args.push(counters.length);
      for (const counter of counters) {
        let index = keyIndexes.get(counter.key);
        if (index === undefined) {
          index = keyIndexes.size + 1;
          keyIndexes.set(counter.key, index);
        }
        args.push(index, counter.cost, counter.limit, counter.resetAtMs);
      }
    }
    let reply: Promise<number[]>;
    try {
      reply = run([...keyIndexes.keys()], args);
    } catch (error) {
      reply = Promise.reject(error);
    }
    reply.then(
      (results) => {
        let at = 0;
        for (const waiting of batch) {
          const refused = results[at] ?? 0;
          const used = results.slice(at + 1, at + 1 + waiting.counters.length);
          at += 1 + waiting.counters.length;
          waiting.resolve(decisionOf(waiting.counters, refused, used));
        }
        sendNext(tag);
      },
      (error: unknown) => {
        for (const waiting of batch) waiting.reject(error);
        sendNext(tag);
      },
    );
  };

  const sendNext = (tag: string | undefined): void => {
    if (tag === undefined) return;
    const waiting = waitingByTag.get(tag);
    if (!waiting || waiting.length === 0) {
      waitingByTag.delete(tag);
      return;
    }
    send(waiting.splice(0, maxBatch), tag);
  };

  return (counters) =>
    new Promise<QuotaDecision>((resolve, reject) => {
      const waiting: Waiting = { counters, resolve, reject };
      const tag = sharedHashTag(counters);
      if (tag === undefined) return send([waiting], undefined);
      const queue = waitingByTag.get(tag);
      if (queue) {
        queue.push(waiting);
        return;
      }
      waitingByTag.set(tag, []);
      send([waiting], tag);
    });
}
