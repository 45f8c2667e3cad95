import { describe, expect, it } from 'vitest';
import { searchOfPastedLink } from './pasted-link.ts';

describe('a code link pasted into the codes search', () => {
  it('gives its GTIN, serial and batch, percent-decoded, whatever its origin, prefix and signature', () => {
    expect(searchOfPastedLink('https://id.example/01/09506000134352/21/SN%2F1/10/LOT-7?sig=abc')).toEqual({
      gtin: '09506000134352',
      serial: 'SN/1',
      batch: 'LOT-7',
    });
    expect(searchOfPastedLink('  http://localhost:8080/verify/01/09506000134352/21/SN-1#x ')).toEqual({
      gtin: '09506000134352',
      serial: 'SN-1',
      batch: '',
    });
  });

  it('gives nothing for text that is no link with a GTIN', () => {
    expect(searchOfPastedLink('09506000134352')).toBeUndefined();
    expect(searchOfPastedLink('https://id.example/01/ABC/21/SN-1')).toBeUndefined();
    expect(searchOfPastedLink('https://id.example/01/09506000134352/21/%E0%A4%A')).toBeUndefined();
  });
});
