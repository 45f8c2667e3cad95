import { describe, expect, it } from 'vitest';
import { csrfRefusal, foreignOriginRefusal } from './csrf.ts';
import { clearedSessionCookie, sessionCookie, sessionTokenOf } from './session-cookie.ts';

describe('the session cookie', () => {
  it('is read from a Cookie header among others, and absent when empty or missing', () => {
    expect(sessionTokenOf('a=1; hallmark_session=abc; b=2', false)).toBe('abc');
    expect(sessionTokenOf('hallmark_session=abc', false)).toBe('abc');
    expect(sessionTokenOf('hallmark_session_other=abc', false)).toBeUndefined();
    expect(sessionTokenOf('hallmark_session=', false)).toBeUndefined();
    expect(sessionTokenOf('x=hallmark_session=abc', false)).toBeUndefined();
    expect(sessionTokenOf(undefined, false)).toBeUndefined();
  });

  it('is the __Host- cookie over HTTPS, and only it: a plain one (which a sibling subdomain can set) is not read', () => {
    expect(sessionTokenOf('hallmark_session=planted; __Host-hallmark_session=own', true)).toBe('own');
    expect(sessionTokenOf('hallmark_session=planted', true)).toBeUndefined();
    expect(sessionTokenOf('__Host-hallmark_session=own', false)).toBeUndefined();
  });

  it('is set HttpOnly, SameSite=Strict, Path=/, Secure and __Host- only over HTTPS; cleared with Max-Age=0', () => {
    expect(sessionCookie('t', false)).toBe('hallmark_session=t; HttpOnly; SameSite=Strict; Path=/');
    expect(sessionCookie('t', true)).toBe('__Host-hallmark_session=t; HttpOnly; SameSite=Strict; Path=/; Secure');
    expect(clearedSessionCookie(true)).toBe('__Host-hallmark_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0; Secure');
    expect(clearedSessionCookie(false)).toBe('hallmark_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0');
  });
});

describe('the CSRF rule for cookie-authenticated requests', () => {
  const own = ['https://hallmark.example', 'http://127.0.0.1:8080'];
  const refused = (method: string, headers: Record<string, string>) => csrfRefusal({ method, headers }, own)?.code;

  it('lets reads pass without anything', () => {
    expect(refused('GET', {})).toBeUndefined();
    expect(refused('HEAD', { origin: 'https://evil.example' })).toBeUndefined();
  });

  it('needs X-Hallmark-Console: 1 on every other method', () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      expect(refused(method, {})).toBe('CSRF_REJECTED');
      expect(refused(method, { 'x-hallmark-console': 'yes' })).toBe('CSRF_REJECTED');
      expect(refused(method, { 'x-hallmark-console': '1' })).toBeUndefined();
    }
  });

  it('needs an Origin, when sent, to be one of the gateway’s own', () => {
    const header = { 'x-hallmark-console': '1' };
    expect(refused('POST', { ...header, origin: 'https://hallmark.example' })).toBeUndefined();
    expect(refused('POST', { ...header, origin: 'https://HALLMARK.example:443' })).toBeUndefined();
    expect(refused('POST', { ...header, origin: 'http://127.0.0.1:8080' })).toBeUndefined();
    expect(refused('POST', { ...header, origin: 'http://hallmark.example' })).toBe('CSRF_REJECTED');
    expect(refused('POST', { ...header, origin: 'https://hallmark.example.evil.example' })).toBe('CSRF_REJECTED');
    expect(refused('POST', { ...header, origin: 'null' })).toBe('CSRF_REJECTED');
    expect(refused('POST', { ...header, origin: 'garbage' })).toBe('CSRF_REJECTED');
  });
});

describe('the Origin rule of sign-in', () => {
  const own = ['https://hallmark.example'];
  it('refuses only a browser’s request from another origin', () => {
    expect(foreignOriginRefusal({ method: 'POST', headers: {} }, own)).toBeUndefined();
    expect(foreignOriginRefusal({ method: 'POST', headers: { origin: 'https://hallmark.example' } }, own)).toBeUndefined();
    expect(foreignOriginRefusal({ method: 'POST', headers: { origin: 'https://evil.example' } }, own)?.code).toBe(
      'CSRF_REJECTED',
    );
  });
});
