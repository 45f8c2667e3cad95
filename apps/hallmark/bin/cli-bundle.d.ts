// Types of cli-bundle.js (plain JavaScript: the command runs it before anything is transpiled).
export declare const manifestFile: string;
export interface CliBundleManifest {
  /** The folder under builds/ that holds the current bundle. */
  build: string;
  /** The workspace root it was made in: a checkout moved elsewhere runs its sources. */
  root: string;
  /** What it was made from, relative to the root, with each file's modification time and size then. */
  inputs: Array<[path: string, mtimeMs: number, size: number]>;
}
export declare function cliBundleFolder(): string;
export declare function freshCliBundle(folder?: string, root?: string): string | undefined;
