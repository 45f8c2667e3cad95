export { type JsonWebKeySet, type OfflineVerification, verifyOffline } from './verify-offline.ts';
