/** A command that could not be carried out (not a usage mistake); the CLI prints it and exits 1. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
}
