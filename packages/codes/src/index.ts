export {
  endOfYymmdd,
  type GenerateInput,
  type GenerateProblem,
  maxMetadataBytes,
  pastExpiryProblem,
  toYymmdd,
  type ValidGenerateRequest,
  validateGenerateRequest,
  yearOfYy,
  yymmddToIsoDate,
} from './generate-request.ts';
export {
  assessScan,
  defaultRiskRules,
  distanceKm,
  type RiskAssessment,
  type RiskIndicator,
  type RiskLevel,
  type RiskRules,
  type ScanFacts,
  type Verdict,
} from './risk.ts';
export {
  type SignedFields,
  signCode,
  signedMessage,
  verifyCodeSignature,
  verifyCodeSignatureForRequest,
} from './signed-message.ts';
