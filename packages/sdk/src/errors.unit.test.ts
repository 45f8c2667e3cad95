import { errorStatus as apiErrorStatus } from '@hallmark/contracts';
import { describe, expect, it } from 'vitest';
import {
  APIError,
  errorClasses,
  errorFromResponse,
  errorStatus,
  NotFoundError,
  RateLimitedError,
  ValidationError,
} from './errors.ts';

const envelope = (code: string, details?: Record<string, unknown>) =>
  JSON.stringify({
    error: { code, message: `about ${code}`, ...(details ? { details } : {}) },
    meta: { requestId: 'from-the-body', timestamp: '2026-11-25T08:00:00.000Z' },
  });

describe('errors by code', () => {
  it('the SDK knows exactly the API’s error codes, with the same statuses', () => {
    expect(errorStatus).toEqual(apiErrorStatus);
  });

  it('each code is its own class, a subclass of APIError, with code, status, requestId, details and headers', () => {
    const classes = new Set<unknown>();
    for (const [code, status] of Object.entries(errorStatus)) {
      const headers = new Headers({ 'x-request-id': `req-${code}` });
      const error = errorFromResponse(status, headers, envelope(code, { field: code }));
      expect(error).toBeInstanceOf(errorClasses[code as keyof typeof errorClasses]);
      expect(error).toBeInstanceOf(APIError);
      expect(error.constructor).not.toBe(APIError);
      expect(error.name).toBe(error.constructor.name);
      expect(error).toMatchObject({ code, status, requestId: `req-${code}`, details: { field: code } });
      expect(error.headers.get('x-request-id')).toBe(`req-${code}`);
      expect(error.message).toContain(`about ${code}`);
      classes.add(error.constructor);
    }
    expect(classes.size).toBe(Object.keys(errorStatus).length);
  });

  it('names the classes as people look for them', () => {
    expect(errorFromResponse(429, new Headers(), envelope('RATE_LIMITED'))).toBeInstanceOf(RateLimitedError);
    expect(errorFromResponse(404, new Headers(), envelope('NOT_FOUND'))).toBeInstanceOf(NotFoundError);
    expect(errorFromResponse(400, new Headers(), envelope('VALIDATION_ERROR'))).toBeInstanceOf(ValidationError);
  });

  it('takes the request id from the body when the header is missing', () => {
    expect(errorFromResponse(404, new Headers(), envelope('NOT_FOUND')).requestId).toBe('from-the-body');
  });

  it('an unknown code or an answer outside the envelope is a plain APIError', () => {
    const unknown = errorFromResponse(418, new Headers(), envelope('TEAPOT'));
    expect(unknown.constructor).toBe(APIError);
    expect(unknown.code).toBe('TEAPOT');
    const html = errorFromResponse(502, new Headers(), '<html>Bad gateway</html>');
    // A proxy's 429 or 503 outside the envelope is still the class of the one code with that status.
    const proxied = errorFromResponse(429, new Headers({ 'retry-after': '2' }), 'Too Many Requests');
    expect(proxied).toBeInstanceOf(RateLimitedError);
    expect(proxied.code).toBe('HTTP_429');
    expect(errorFromResponse(400, new Headers(), '').constructor).toBe(APIError);
    expect(html.constructor).toBe(APIError);
    expect(html).toMatchObject({ code: 'HTTP_502', status: 502, details: undefined });
    expect(html.message).toContain('Bad gateway');
  });

  it('RateLimitedError says how long to wait', () => {
    const error = errorFromResponse(429, new Headers({ 'retry-after': '3' }), envelope('RATE_LIMITED'));
    expect((error as RateLimitedError).retryAfterSeconds).toBe(3);
  });
});
