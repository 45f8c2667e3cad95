export { type BlobStore, isSha256Hex } from './blob-store.ts';
export { createFilesystemBlobStore } from './filesystem-blob-store.ts';
export { createS3BlobStore, type S3Options, type SigV4Request, sigV4Authorization } from './s3-blob-store.ts';
