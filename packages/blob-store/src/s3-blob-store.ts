import { createHash, createHmac } from 'node:crypto';
import { type BlobStore, isSha256Hex } from './blob-store.ts';

export interface S3Options {
  /** Bucket URL, path style: `https://s3.eu-west-1.amazonaws.com/my-bucket` or `http://minio:9000/photos`. */
  bucketUrl: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Key prefix inside the bucket; default `blobs/`. */
  prefix?: string;
}

const sha256Hex = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

export interface SigV4Request {
  method: string;
  /** The absolute path, already URI-encoded as sent. */
  path: string;
  /** Lower-case names; every one is signed. Must include host, x-amz-content-sha256 and x-amz-date. */
  headers: Record<string, string>;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * The Authorization header of an S3 request, AWS Signature Version 4 (header-based, no query
 * string): canonical request, string to sign, signing key from the secret and the day, signature.
 * Pure; checked against AWS's published example.
 */
export function sigV4Authorization(request: SigV4Request): string {
  const names = Object.keys(request.headers).sort();
  const amzDate = request.headers['x-amz-date'] ?? '';
  const day = amzDate.slice(0, 8);
  const canonicalRequest = [
    request.method,
    request.path,
    '',
    ...names.map((name) => `${name}:${(request.headers[name] ?? '').trim()}`),
    '',
    names.join(';'),
    request.headers['x-amz-content-sha256'] ?? '',
  ].join('\n');
  const scope = `${day}/${request.region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${request.secretAccessKey}`, day), request.region), 's3'), 'aws4_request');
  const signature = createHmac('sha256', signingKey).update(toSign).digest('hex');
  return `AWS4-HMAC-SHA256 Credential=${request.accessKeyId}/${scope},SignedHeaders=${names.join(';')},Signature=${signature}`;
}

/**
 * Blobs in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2) over plain HTTPS with AWS Signature
 * Version 4, no SDK. PUT, GET, HEAD and DELETE on `<prefix><sha256>`. The signing is tested against AWS's
 * published example; the adapter has not run against a bucket here (no S3 server is available).
 */
export function createS3BlobStore(options: S3Options): BlobStore {
  const bucket = new URL(options.bucketUrl.endsWith('/') ? options.bucketUrl : `${options.bucketUrl}/`);
  const prefix = options.prefix ?? 'blobs/';

  const signedFetch = async (method: 'GET' | 'PUT' | 'HEAD' | 'DELETE', sha256: string, body?: Uint8Array) => {
    if (!isSha256Hex(sha256)) throw new RangeError('A blob key is a SHA-256 in lower-case hex.');
    const url = new URL(`${prefix}${sha256}`, bucket);
    const headers: Record<string, string> = {
      host: url.host,
      'x-amz-content-sha256': sha256Hex(body ?? ''),
      'x-amz-date': new Date()
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.\d{3}/, ''),
    };
    const authorization = sigV4Authorization({
      method,
      path: url.pathname,
      headers,
      region: options.region,
      accessKeyId: options.accessKeyId,
      secretAccessKey: options.secretAccessKey,
    });
    return fetch(url, { method, headers: { ...headers, authorization }, ...(body ? { body } : {}) });
  };

  return {
    async put(bytes) {
      const sha256 = sha256Hex(bytes);
      const response = await signedFetch('PUT', sha256, bytes);
      if (!response.ok) throw new Error(`S3 PUT answered ${response.status}`);
      return { sha256, size: bytes.length };
    },
    async get(sha256) {
      const response = await signedFetch('GET', sha256);
      if (response.status === 404) return undefined;
      if (!response.ok) throw new Error(`S3 GET answered ${response.status}`);
      return Buffer.from(await response.arrayBuffer());
    },
    async has(sha256) {
      const response = await signedFetch('HEAD', sha256);
      if (response.status === 404) return false;
      if (!response.ok) throw new Error(`S3 HEAD answered ${response.status}`);
      return true;
    },
    async delete(sha256) {
      const response = await signedFetch('DELETE', sha256);
      if (!response.ok && response.status !== 404) throw new Error(`S3 DELETE answered ${response.status}`);
    },
  };
}
