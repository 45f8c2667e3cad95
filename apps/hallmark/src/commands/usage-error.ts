/** A command line that cannot be carried out as written; the CLI prints it in one line with a hint and exits 64. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
