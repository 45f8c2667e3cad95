import type { ProgressStream } from '../progress.ts';

/** Where a command writes: results to `out` (stdout), row errors and summaries to `err`, progress to `terminal`. */
export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
  /** stderr as the progress bar sees it (drawn only when it is a terminal). */
  terminal: ProgressStream;
}
