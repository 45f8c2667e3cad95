/**
 * GS1 AI encodable character set 82 (GS1 General Specifications, figure 7.11-1): the characters
 * serials and batches may use. `#`, space and anything outside ASCII are not in it.
 */
const ai82 = /^[!"%&'()*+,\-./0-9:;<=>?A-Z_a-z]*$/;

export function isAi82(text: string): boolean {
  return ai82.test(text);
}

/** Serial (AI 21), batch (AI 10) and variant (AI 22): 1 to 20 characters of set 82. */
export function checkAi82Value(name: string, value: string): string | undefined {
  if (value.length === 0) return `${name} is empty`;
  if (value.length > 20) return `${name} is ${value.length} characters; at most 20 are allowed`;
  if (!isAi82(value)) return `${name} has characters outside the GS1 AI 82 set (letters, digits and !"%&'()*+,-./:;<=>?_)`;
  // A path segment of . or .. (even percent-encoded) is removed by every URL parser.
  if (value === '.' || value === '..') return `${name} cannot be "${value}": a link's path cannot carry it`;
  return undefined;
}
