import type { ErrorData } from '@hallmark/contracts';

export function serviceUnavailable(subject: string, reason: 'no-responders' | 'timeout', timeoutMs: number): ErrorData {
  return {
    code: 'SERVICE_UNAVAILABLE',
    message:
      reason === 'no-responders'
        ? 'The service that handles this request is not running. Retry shortly.'
        : `The service that handles this request did not answer within ${timeoutMs} ms. Retry shortly.`,
    details: { subject, reason },
  };
}
