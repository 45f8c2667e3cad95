export { randomHex, sha256Hex, uuidV7 } from './digest.ts';
export {
  type Ed25519KeyPair,
  ed25519PrivateKeyObject,
  ed25519PublicKeyObject,
  generateEd25519KeyPair,
  signEd25519,
  signEd25519InThreadPool,
  verifyEd25519,
  verifyEd25519InThreadPool,
} from './ed25519.ts';
export { ed25519Jwk, ed25519Thumbprint, type OkpJwk } from './jwk.ts';
export { keyRegistrationMessage, signKeyRegistration, verifyKeyRegistrationProof } from './key-registration.ts';
export { type PublicKeyParseResult, parseEd25519PublicKey } from './public-key-input.ts';
export { open, parseMasterKey, seal } from './sealed-box.ts';
