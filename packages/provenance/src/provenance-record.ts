import type { Environment, Principal } from '@hallmark/contracts';
import { sha256Hex } from '@hallmark/crypto';
import type { StoredEvent } from '@hallmark/event-store';
import { canonicalJson } from './canonical-json.ts';

/** An account's own history (schema changes, compliance config changes), per environment. */
export const accountStream = (owner: Principal): string => `account-${owner.accountId}-${owner.environment}`;

/** Every event of an asset lives in this stream. */
export const assetStream = (assetId: string): string => `asset-${assetId}`;
export const assetIdOfStream = (streamId: string): string | undefined =>
  streamId.startsWith('asset-') ? streamId.slice('asset-'.length) : undefined;

/**
 * What an event's hash covers (docs/COMPLIANCE.md): the asset and its owner, the event's place in
 * the chain, its type, time and data, and the previous event's hash (null for the first).
 */
export interface ProvenanceRecord {
  assetId: string;
  accountId: string;
  environment: Environment;
  sequence: number;
  type: string;
  occurredAt: string;
  data: Record<string, unknown>;
  prevHash: string | null;
}

export interface ChainedRecord extends ProvenanceRecord {
  hash: string;
}

/** SHA-256, hex, of the record's RFC 8785 canonical JSON. */
export function hashProvenanceRecord(record: ProvenanceRecord): string {
  const { assetId, accountId, environment, sequence, type, occurredAt, data, prevHash } = record;
  return sha256Hex(canonicalJson({ assetId, accountId, environment, sequence, type, occurredAt, data, prevHash }));
}

/** How the chain fields ride in a stored event: `metadata.provenance`. */
export interface ProvenanceMetadata {
  assetId: string;
  accountId: string;
  environment: Environment;
  sequence: number;
  occurredAt: string;
  prevHash: string | null;
  hash: string;
}

export function provenanceMetadataOf(record: ChainedRecord): ProvenanceMetadata {
  const { assetId, accountId, environment, sequence, occurredAt, prevHash, hash } = record;
  return { assetId, accountId, environment, sequence, occurredAt, prevHash, hash };
}

/** The chained record a stored event carries, or undefined when it is not a provenance event. */
export function chainedRecordOf(event: StoredEvent): ChainedRecord | undefined {
  const meta = event.metadata.provenance as ProvenanceMetadata | undefined;
  if (!meta || typeof meta !== 'object' || typeof meta.hash !== 'string') return undefined;
  return {
    assetId: meta.assetId,
    accountId: meta.accountId,
    environment: meta.environment,
    sequence: meta.sequence,
    type: event.type,
    occurredAt: meta.occurredAt,
    data: event.data,
    prevHash: meta.prevHash,
    hash: meta.hash,
  };
}

/** The Merkle leaf input of an event: the 32 bytes of its hash. */
export const leafInputOf = (hash: string): Buffer => Buffer.from(hash, 'hex');
