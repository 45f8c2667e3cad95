export { checkAi82Value, isAi82 } from './ai82.ts';
export { type DecompressResult, decompressDigitalLink, looksCompressed } from './compressed-digital-link.ts';
export {
  type DigitalLink,
  formatDigitalLink,
  isValidYymmdd,
  type LinkProblem,
  type ParseResult,
  parseDigitalLink,
} from './digital-link.ts';
export { checkGtin14, type GtinCheck, gs1CheckDigit } from './gtin.ts';
