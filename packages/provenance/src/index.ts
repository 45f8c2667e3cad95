export {
  type AssetRef,
  appendToAssetHistory,
  chainEvents,
  type ProvenanceEventInput,
  startAssetHistory,
} from './asset-history.ts';
export { canonicalJson } from './canonical-json.ts';
export { type ChainBreak, type ChainCheck, createChainChecker, verifyChain } from './chain-check.ts';
export {
  type Checkpoint,
  type CheckpointCheck,
  checkpointBody,
  type NoteKey,
  type NoteSigner,
  noteKeyHash,
  openSignedCheckpoint,
  signCheckpoint,
} from './checkpoint.ts';
export {
  accountStream,
  assetIdOfStream,
  assetStream,
  type ChainedRecord,
  chainedRecordOf,
  hashProvenanceRecord,
  leafInputOf,
  type ProvenanceMetadata,
  type ProvenanceRecord,
  provenanceMetadataOf,
} from './provenance-record.ts';
export { firstInexactNumber, firstRoundedInteger } from './rounded-integers.ts';
