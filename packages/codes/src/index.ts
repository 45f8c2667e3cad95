export { type SignedFields, signCode, signedMessage, verifyCodeSignature } from './signed-message.ts';
