export type ReadinessChecks = Record<string, () => Promise<void>>;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, { ok: boolean; latencyMs: number; error?: string }>;
}

/** Runs every check at once; one that fails or takes longer than `timeoutMs` makes the process not ready. */
export async function checkReadiness(checks: ReadinessChecks, timeoutMs = 1_000): Promise<ReadinessReport> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      const started = performance.now();
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          check(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        return [name, { ok: true, latencyMs: Math.round(performance.now() - started) }] as const;
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        return [name, { ok: false, latencyMs: Math.round(performance.now() - started), error: message }] as const;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ready: entries.every(([, result]) => result.ok), checks: Object.fromEntries(entries) };
}
