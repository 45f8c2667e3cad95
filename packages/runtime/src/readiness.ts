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

/**
 * Readiness for an address anyone may ask (the gateway's public /ready): one check of the stores
 * a `everyMs` at most, however often it is asked (each takes a pooled connection, and a flood of
 * them starved the requests), its report shared by the askers; and no error text beyond the
 * check's own timeout (a connection error names internal hosts): `onFailure` is told the rest.
 */
export function createSharedReadiness(
  checks: ReadinessChecks,
  options: { everyMs?: number; onFailure?: (report: ReadinessReport) => void } = {},
): () => Promise<ReadinessReport> {
  const everyMs = options.everyMs ?? 1_000;
  let last: { at: number; report: Promise<ReadinessReport> } | undefined;
  const publicReport = (report: ReadinessReport): ReadinessReport => {
    if (!report.ready) options.onFailure?.(report);
    const checksShown = Object.fromEntries(
      Object.entries(report.checks).map(([name, { ok, latencyMs, error }]) => [
        name,
        ok ? { ok, latencyMs } : { ok, latencyMs, error: error?.startsWith('no answer within') ? error : 'unreachable' },
      ]),
    );
    return { ready: report.ready, checks: checksShown };
  };
  return () => {
    const now = performance.now();
    if (!last || now - last.at >= everyMs) last = { at: now, report: checkReadiness(checks).then(publicReport) };
    return last.report;
  };
}
