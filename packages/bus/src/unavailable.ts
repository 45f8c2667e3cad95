import type { ErrorData } from '@hallmark/contracts';

const messages = {
  'no-responders': () => 'The service that handles this request is not running. Retry shortly.',
  timeout: (timeoutMs: number) => `The service that handles this request did not answer within ${timeoutMs} ms. Retry shortly.`,
  closed: () => 'The connection to the message bus closed before the service answered. Retry shortly.',
};

/**
 * The answer when no service answered: one not running, one too slow, or the bus gone. Worth a retry
 * a second on (the gateway sends `retryAfterSeconds` as Retry-After): another replica, or the same
 * one restarted, takes it.
 */
export function serviceUnavailable(subject: string, reason: keyof typeof messages, timeoutMs: number): ErrorData {
  return {
    code: 'SERVICE_UNAVAILABLE',
    message: messages[reason](timeoutMs),
    details: { subject, reason, retryAfterSeconds: 1 },
  };
}

/**
 * The answer to a request without a valid signature of the deployment's bus secret. Deliberately
 * vague: why it was refused goes to the service's log.
 */
export function refusedRequest(subject: string): ErrorData {
  return {
    code: 'SERVICE_UNAVAILABLE',
    message: "The service refused the request: it was not signed with this deployment's bus secret, or too long ago.",
    details: { subject, reason: 'refused' },
  };
}

/**
 * The answer to a request larger than one bus message (NATS's max_payload less headroom): what
 * the client sent is too large to carry, which the gateway answers 413.
 */
export function requestTooLarge(bytes: number, maxBytes: number): ErrorData {
  return {
    code: 'PAYLOAD_TOO_LARGE',
    message: `The request is too large to pass to the service (${bytes} bytes with its envelope; at most ${maxBytes}). Send less.`,
    details: { limitBytes: maxBytes },
  };
}
