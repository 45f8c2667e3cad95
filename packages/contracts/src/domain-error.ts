import type { ErrorCode } from './error-codes.ts';

/**
 * A decider's refusal, as a value (our style: decide returns events or an error, it does not throw);
 * the shell answers it as the HTTP error of the same code. `C` narrows the codes a decider uses.
 */
export interface DomainError<C extends ErrorCode = ErrorCode> {
  type: 'DomainError';
  code: C;
  message: string;
  details: Record<string, unknown>;
}

export function refuse<C extends ErrorCode>(code: C, message: string, details: Record<string, unknown> = {}): DomainError<C> {
  return { type: 'DomainError', code, message, details };
}

/** True when a decision is a refusal rather than its events. */
export function isDomainError<C extends ErrorCode>(decision: readonly unknown[] | DomainError<C>): decision is DomainError<C> {
  return !Array.isArray(decision) && (decision as DomainError<C>).type === 'DomainError';
}
