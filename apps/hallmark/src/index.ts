export { startEmbedded, type EmbeddedProduct } from './embedded.ts';
