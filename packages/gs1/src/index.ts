export { checkAi82Value, isAi82 } from './ai82.ts';
export { writesRealDateTime } from './calendar.ts';
export { type DecompressResult, decompressDigitalLink, looksCompressed } from './compressed-digital-link.ts';
export {
  type DigitalLink,
  formatDigitalLink,
  isValidYymmdd,
  type LinkProblem,
  type ParseResult,
  parseDigitalLink,
} from './digital-link.ts';
export {
  AI_TABLE,
  type AiEntry,
  checkAiValue,
  type DlAiValue,
  type DlSyntax,
  type DlSyntaxError,
  type DlSyntaxOptions,
  type DlSyntaxResult,
  isValidPathSequence,
  lookupAi,
  parseDlUri,
} from './dl-syntax.ts';
export { asGtin14, checkGtin14, type GtinCheck, gs1CheckDigit } from './gtin.ts';
export { isObjectLabel, objectGtin } from './object-gtin.ts';
