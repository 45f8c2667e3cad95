export { type EmbeddedProduct, startEmbedded } from './embedded.ts';
