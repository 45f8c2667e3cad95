// Types of cli-bundle.js (plain JavaScript: the command runs it before anything is transpiled).
export declare const manifestFile: string;
export interface CliBundleManifest {
  /** When the build started (ms since the epoch): an input changed since makes the bundle stale. */
  builtFrom: number;
  /** The files the bundle was made from, relative to the workspace's root. */
  inputs: string[];
}
export declare function cliBundleFolder(): string;
export declare function freshCliBundle(folder?: string, root?: string): string | undefined;
