import { APIConnectionError, APIError, APITimeoutError, APIUserAbortError, HallmarkError } from '@hallmark/sdk';

/**
 * What the SDK threw, in one line for the CLI (no stack): the API's status, code and message, with
 * the request id to quote; or that no answer came. Undefined for anything the SDK did not throw.
 */
export function sdkErrorLine(error: unknown): string | undefined {
  if (error instanceof APIError) {
    // The SDK's message already leads with the status and code; said once.
    const lead = `${error.status} ${error.code}: `;
    const message = error.message.startsWith(lead) ? error.message : `${lead}${error.message}`;
    return `the API answered ${message}${error.requestId ? ` (request ${error.requestId})` : ''}`;
  }
  if (error instanceof APITimeoutError) return `the API did not answer in time: ${error.message}`;
  if (error instanceof APIConnectionError) return error.message;
  if (error instanceof APIUserAbortError) return 'stopped';
  if (error instanceof HallmarkError) return error.message;
  return undefined;
}
