/**
 * A progress bar for long work (batch generation, exports, projection rebuilds). It draws on
 * stderr, and only when stderr is a terminal: piped or redirected, it prints nothing at all, so
 * scripts, logs and `--json` on stdout never see it.
 */

/** Where the bar is drawn: process.stderr, or a stand-in in tests. */
export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export interface ProgressOptions {
  /** What is being done: "generating", "exporting". */
  label: string;
  /** What is counted: "rows", "events". */
  unit: string;
  /** How many there are, when known; without it the bar shows the count and the rate. */
  total?: number | undefined;
  stream?: ProgressStream;
  now?: () => number;
}

export interface Progress {
  /** Counts `amount` more as done. */
  advance(amount: number): void;
  /** The total, once it is known (an export learns it from its first answer). */
  setTotal(total: number): void;
  /** Wipes the bar from the terminal; the caller prints its own summary after. */
  finish(): void;
}

const redrawEveryMs = 100;
const numberFormat = new Intl.NumberFormat('en-US');

/** "1m05s", "42s": the time left, as people read it. */
function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

export interface ProgressState {
  label: string;
  unit: string;
  done: number;
  total: number | undefined;
  elapsedMs: number;
  /** The terminal's width; the line never wraps. */
  columns: number;
}

/**
 * One line of the bar: `generating [#####.....] 50% 5,000/10,000 rows 1,234/s 4s left`, or
 * `exporting 5,000 events 1,234/s` when the total is unknown. Pure, for the tests.
 */
export function renderProgress(state: ProgressState): string {
  const rate = state.elapsedMs > 0 ? (state.done * 1000) / state.elapsedMs : 0;
  const rateText = rate > 0 ? ` ${numberFormat.format(Math.round(rate))}/s` : '';
  let line: string;
  if (state.total === undefined || state.total <= 0) {
    line = `${state.label} ${numberFormat.format(state.done)} ${state.unit}${rateText}`;
  } else {
    const fraction = Math.min(1, state.done / state.total);
    const left = rate > 0 && fraction < 1 ? ` ${formatDuration(((state.total - state.done) / rate) * 1000)} left` : '';
    const counts = `${Math.floor(fraction * 100)}% ${numberFormat.format(state.done)}/${numberFormat.format(state.total)} ${state.unit}`;
    const text = `${counts}${rateText}${left}`;
    // The bar takes what the label and room for the figures leave, 10 to 30 cells; the same width
    // on every redraw, so it does not twitch as the figures change length.
    const width = Math.max(10, Math.min(30, state.columns - state.label.length - 50));
    const filled = Math.round(fraction * width);
    line = `${state.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${text}`;
  }
  return line.length >= state.columns ? line.slice(0, Math.max(0, state.columns - 1)) : line;
}

/** A bar on `stream` (stderr by default); a bar that does nothing when the stream is no terminal. */
export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  if (!stream.isTTY) return { advance() {}, setTotal() {}, finish() {} };
  const now = options.now ?? Date.now;
  const started = now();
  let done = 0;
  let total = options.total;
  let drawnAt = Number.NEGATIVE_INFINITY;
  let finished = false;
  const draw = (force: boolean) => {
    const at = now();
    if (finished || (!force && at - drawnAt < redrawEveryMs)) return;
    drawnAt = at;
    const line = renderProgress({
      label: options.label,
      unit: options.unit,
      done,
      total,
      elapsedMs: at - started,
      // A pseudo-terminal may say 0 columns: then the usual 80.
      columns: stream.columns && stream.columns >= 20 ? stream.columns : 80,
    });
    // Back to the line's start, the new text, then clear what a longer earlier line left.
    stream.write(`\r${line}\x1b[K`);
  };
  draw(true);
  return {
    advance(amount) {
      done += amount;
      draw(total !== undefined && done >= total);
    },
    setTotal(value) {
      total = value;
      draw(true);
    },
    finish() {
      if (finished) return;
      finished = true;
      stream.write('\r\x1b[K');
    },
  };
}
