/**
 * Content-addressed storage for large bytes (reference photos): a blob's key is the SHA-256 of its
 * bytes, hex. Writing the same bytes twice stores them once.
 */
export interface BlobStore {
  /** Stores the bytes; resolves with their SHA-256 (hex), their key. */
  put(bytes: Uint8Array): Promise<{ sha256: string; size: number }>;
  /** The bytes under a key, or undefined. */
  get(sha256: string): Promise<Buffer | undefined>;
  has(sha256: string): Promise<boolean>;
  /** Removes the bytes under a key; nothing happens when there are none. */
  delete(sha256: string): Promise<void>;
}

export const isSha256Hex = (value: string) => /^[0-9a-f]{64}$/.test(value);
