export {
  endOfYymmdd,
  type GenerateInput,
  type GenerateProblem,
  toYymmdd,
  type ValidGenerateRequest,
  validateGenerateRequest,
  yymmddToIsoDate,
} from './generate-request.ts';
export { type SignedFields, signCode, signedMessage, verifyCodeSignature } from './signed-message.ts';
