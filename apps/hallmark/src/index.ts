export { backendServices, type EmbeddedProduct, startEmbedded } from './embedded.ts';
