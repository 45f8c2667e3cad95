/**
 * Records the passes of the event loop while `work` runs: `ran` gets "|" at each pass (an immediate
 * that asks for the next one), between whatever `work` pushes into it meanwhile. Tests of turns
 * read from it what went on in which pass.
 */
export async function recordingLoopPasses<T>(ran: string[], work: () => Promise<T>): Promise<T> {
  let watching = true;
  const watch = () => {
    if (!watching) return;
    ran.push('|');
    setImmediate(watch);
  };
  setImmediate(watch);
  try {
    return await work();
  } finally {
    watching = false;
  }
}

/**
 * The entries of each pass that `recordingLoopPasses` recorded something in, joined by spaces; what
 * ran before the first pass (synchronously, as `work` was called) is left out.
 */
export function passesOf(ran: readonly string[]): string[] {
  return ran
    .join(' ')
    .split('|')
    .slice(1)
    .map((pass) => pass.trim())
    .filter(Boolean);
}
