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

/**
 * Blobs in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2) over plain HTTPS with AWS Signature
 * Version 4, no SDK. PUT, GET and HEAD on `<prefix><sha256>`. Not exercised by the test suite (no
 * S3 server runs here); its request signing follows the AWS SigV4 documentation.
 */
export function createS3BlobStore(options: S3Options): BlobStore {
  const bucket = new URL(options.bucketUrl.endsWith('/') ? options.bucketUrl : `${options.bucketUrl}/`);
  const prefix = options.prefix ?? 'blobs/';

  const signedFetch = async (method: 'GET' | 'PUT' | 'HEAD', sha256: string, body?: Uint8Array) => {
    if (!isSha256Hex(sha256)) throw new RangeError('A blob key is a SHA-256 in lower-case hex.');
    const url = new URL(`${prefix}${sha256}`, bucket);
    const now = new Date();
    const amzDate = now
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}/, '');
    const day = amzDate.slice(0, 8);
    const payloadHash = body ? sha256Hex(body) : sha256Hex('');
    const headers: Record<string, string> = { host: url.host, 'x-amz-content-sha256': payloadHash, 'x-amz-date': amzDate };
    const signedHeaders = Object.keys(headers).sort().join(';');
    const canonicalRequest = [
      method,
      url.pathname,
      '',
      ...Object.keys(headers)
        .sort()
        .map((name) => `${name}:${headers[name]}`),
      '',
      signedHeaders,
      payloadHash,
    ].join('\n');
    const scope = `${day}/${options.region}/s3/aws4_request`;
    const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
    const signingKey = hmac(hmac(hmac(hmac(`AWS4${options.secretAccessKey}`, day), options.region), 's3'), 'aws4_request');
    const signature = createHmac('sha256', signingKey).update(toSign).digest('hex');
    const authorization = `AWS4-HMAC-SHA256 Credential=${options.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
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
  };
}
