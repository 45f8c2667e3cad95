import { describe, expect, it } from 'vitest';
import { decodedPathOf, originFormOf } from './request-target.ts';

describe('originFormOf', () => {
  it('keeps a path as it came, and takes the path and query of an absolute URL', () => {
    expect(originFormOf('/01/09506000134352?sig=x')).toBe('/01/09506000134352?sig=x');
    expect(originFormOf('http://attacker.example/01/09506000134352?sig=x')).toBe('/01/09506000134352?sig=x');
    expect(originFormOf('HTTPS://a.example:8443/api/v1/keys')).toBe('/api/v1/keys');
    expect(originFormOf('http://a.example')).toBe('/');
    expect(originFormOf('http://a.example?x=1')).toBe('/?x=1');
    expect(originFormOf('http://user@a.example/x')).toBe('/x');
  });

  it('leaves what is not an absolute URL to the router (asterisk form, a bare authority)', () => {
    expect(originFormOf('*')).toBe('*');
    expect(originFormOf('127.0.0.1:5432')).toBe('127.0.0.1:5432');
  });
});

describe('decodedPathOf', () => {
  it('reads percent-encoded letters as the router does, but not what would change the path’s segments', () => {
    expect(decodedPathOf('/%61pi/v1/code/gener%61te')).toBe('/api/v1/code/generate');
    expect(decodedPathOf('/api/v1/schemas/a%2Fb%3F%23')).toBe('/api/v1/schemas/a%2Fb%3F%23');
    expect(decodedPathOf('/api/v1/keys')).toBe('/api/v1/keys');
  });

  it('keeps a path whose encoding is not UTF-8 as it came', () => {
    expect(decodedPathOf('/api/v1/schemas/%ED%A0%80')).toBe('/api/v1/schemas/%ED%A0%80');
    expect(decodedPathOf('/api/v1/schemas/%')).toBe('/api/v1/schemas/%');
  });
});
