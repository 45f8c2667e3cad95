import { describe, expect, it } from 'vitest';
import { checkAi82Value, isAi82 } from './ai82.ts';
import { formatDigitalLink, isValidYymmdd, parseDigitalLink } from './digital-link.ts';
import { asGtin14, checkGtin14, gs1CheckDigit } from './gtin.ts';

describe('GTIN-14', () => {
  it.each(['09506000134352', '00012345600012', '10614141000415', '40123455555555', '00000000000000'])('accepts %s', (gtin) => {
    expect(checkGtin14(gtin)).toEqual({ ok: true });
  });

  it('computes the check digit', () => {
    expect(gs1CheckDigit('0950600013435')).toBe(2);
    expect(gs1CheckDigit('1061414100041')).toBe(5);
  });

  it.each([
    ['09506000134353', 'check-digit'],
    ['0950600013435', 'format'],
    ['095060001343522', 'format'],
    ['0950600013435A', 'format'],
    ['', 'format'],
    [' 9506000134352', 'format'],
  ])('refuses %j (%s) and says what was expected', (gtin, reason) => {
    const result = checkGtin14(gtin);
    expect(result).toMatchObject({ ok: false, reason });
    if (!result.ok && result.reason === 'check-digit') expect(result.expected).toBe('09506000134352');
  });
});

describe('asGtin14', () => {
  it('writes 8 to 13 digits as a GTIN-14 (zeros before it), and leaves anything else as it is', () => {
    expect(asGtin14('96385074')).toBe('00000096385074');
    expect(asGtin14('036000291452')).toBe('00036000291452');
    expect(asGtin14('9506000134352')).toBe('09506000134352');
    expect(checkGtin14(asGtin14('9506000134352'))).toEqual({ ok: true });
    // A UPC whose leading zero a spreadsheet dropped: 11 digits.
    expect(asGtin14('36000291452')).toBe('00036000291452');
    expect(checkGtin14(asGtin14('36000291452'))).toEqual({ ok: true });
    for (const value of ['09506000134352', '123', '1234567', '950600013435X', '', ' 9506000134352', '095060001343520'])
      expect(asGtin14(value)).toBe(value);
  });
});

describe('AI 82 values', () => {
  it('accepts the set and refuses what is outside it', () => {
    expect(isAi82(`!"%&'()*+,-./0123456789:;<=>?ABCXYZ_abcxyz`)).toBe(true);
    for (const bad of ['#', ' ', 'é', '€', '\n', '[', '@', '^', '`', '{', '~']) expect(isAi82(`A${bad}`)).toBe(false);
    expect(checkAi82Value('serial', 'X'.repeat(20))).toBeUndefined();
    expect(checkAi82Value('serial', 'X'.repeat(21))).toMatch(/at most 20/);
    expect(checkAi82Value('batch', '')).toMatch(/empty/);
    expect(checkAi82Value('serial', '..')).toMatch(/cannot be/);
  });
});

describe('AI 17 dates', () => {
  it.each([
    ['261231', true],
    ['260229', false],
    ['280229', true],
    ['261300', false],
    ['260100', true],
    ['2612', false],
    ['26123a', false],
  ])('%s is valid: %s', (date, valid) => expect(isValidYymmdd(date)).toBe(valid));
});

const sig = 'a'.repeat(86);

describe('parseDigitalLink', () => {
  it('reads the spec order, with batch, expiry and sig', () => {
    expect(parseDigitalLink(`https://id.brand.com/01/09506000134352/21/SER-1/10/LOT%2F7?17=261231&sig=${sig}`)).toEqual({
      ok: true,
      link: {
        origin: 'https://id.brand.com',
        gtin: '09506000134352',
        serial: 'SER-1',
        batch: 'LOT/7',
        expiry: '261231',
        signature: sig,
      },
    });
  });

  it('reads GS1 order, AI 8030, a variant, a path prefix, any host and surrounding white space', () => {
    const parsed = parseDigitalLink(`  http://localhost:8080/p/01/09506000134352/22/V1/10/L1/21/S1?8030=${sig}&utm=x \n`);
    expect(parsed).toEqual({
      ok: true,
      link: { origin: 'http://localhost:8080', gtin: '09506000134352', variant: 'V1', batch: 'L1', serial: 'S1', signature: sig },
    });
  });

  it('reads a link without batch or serial', () => {
    expect(parseDigitalLink(`https://x.y/01/09506000134352?sig=${sig}`)).toMatchObject({
      ok: true,
      link: { gtin: '09506000134352' },
    });
  });

  it('answers MISSING_SIGNATURE when there is no sig', () => {
    expect(parseDigitalLink('https://x.y/01/09506000134352/21/S1')).toMatchObject({
      ok: false,
      problem: { code: 'MISSING_SIGNATURE' },
    });
  });

  it.each([
    ['not a URL', 'hello world'],
    ['empty', '   '],
    ['another scheme', `ftp://x.y/01/09506000134352/21/S?sig=${sig}`],
    ['no /01/', `https://x.y/02/09506000134352/21/S?sig=${sig}`],
    ['a bad check digit', `https://x.y/01/09506000134353/21/S?sig=${sig}`],
    ['a short GTIN', `https://x.y/01/9506000134352/21/S?sig=${sig}`],
    ['an unknown qualifier', `https://x.y/01/09506000134352/99/S?sig=${sig}`],
    ['a repeated qualifier', `https://x.y/01/09506000134352/21/S/21/T?sig=${sig}`],
    ['a dangling qualifier', `https://x.y/01/09506000134352/21?sig=${sig}`],
    ['a variant after the serial', `https://x.y/01/09506000134352/21/S/22/V?sig=${sig}`],
    ['a serial over 20 characters', `https://x.y/01/09506000134352/21/${'S'.repeat(21)}?sig=${sig}`],
    ['a character outside set 82', `https://x.y/01/09506000134352/21/S%23?sig=${sig}`],
    ['broken percent-encoding', `https://x.y/01/09506000134352/21/S%E0%A4?sig=${sig}`],
    ['an impossible expiry', `https://x.y/01/09506000134352/21/S?17=261340&sig=${sig}`],
    ['two signatures', `https://x.y/01/09506000134352/21/S?sig=${sig}&8030=${sig}`],
    ['a signature with padding', `https://x.y/01/09506000134352/21/S?sig=${sig}==`],
  ])('answers INVALID_URL for %s, with a message', (_, input) => {
    const result = parseDigitalLink(input);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.problem.code).toBe('INVALID_URL');
      expect(result.problem.message.length).toBeGreaterThan(10);
    }
  });

  it('puts provided and expected in the details of a GTIN refusal', () => {
    const result = parseDigitalLink(`https://x.y/01/09506000134353/21/S?sig=${sig}`);
    expect(result).toMatchObject({ ok: false, problem: { details: { provided: '09506000134353', expected: '09506000134352' } } });
  });

  it('names the characters sent percent-encoded as UTF-8, not as the bytes they are read as', () => {
    const refusal = (path: string) => {
      const result = parseDigitalLink(`https://x.y/01/09506000134352/21/${path}?sig=${sig}`);
      return result.ok ? undefined : { message: result.problem.message, provided: result.problem.details?.provided };
    };
    expect(refusal('%C3%A9t%C3%A9')).toEqual({
      message: 'AI 21 (SERIAL) contains "é", which is not in GS1 character set 82.',
      provided: 'été',
    });
    expect(refusal('A%E2%82%AC')).toEqual({
      message: 'AI 21 (SERIAL) contains "€", which is not in GS1 character set 82.',
      provided: 'A€',
    });
    // Its length in characters too: 19 letters and é are 20, within AI 21's 20 (21 bytes were "too long").
    expect(refusal(`${'A'.repeat(19)}%C3%A9`)).toEqual({
      message: 'AI 21 (SERIAL) contains "é", which is not in GS1 character set 82.',
      provided: `${'A'.repeat(19)}é`,
    });
    expect(refusal(`${'A'.repeat(21)}%C3%A9`)?.message).toBe('AI 21 (SERIAL) is too long: 22 characters, at most 20 allowed.');
    // bytes that are no UTF-8 text are named as sent; a `%` sent as %25 stays a `%`
    expect(refusal('%25%FF')).toEqual({
      message: 'AI 21 (SERIAL) contains the byte %FF, which is not UTF-8 text, nor in any GS1 character set.',
      provided: '%%FF',
    });
  });
});

describe('formatDigitalLink', () => {
  const link = {
    origin: 'https://id.brand.com',
    gtin: '09506000134352',
    serial: 'S/1',
    batch: 'L 1'.replace(' ', '_'),
    expiry: '261231',
    signature: sig,
  };

  it('writes the spec order by default and GS1 order on request, percent-encoding values', () => {
    expect(formatDigitalLink(link)).toBe(`https://id.brand.com/01/09506000134352/21/S%2F1/10/L_1?17=261231&sig=${sig}`);
    expect(formatDigitalLink(link, 'gs1')).toBe(`https://id.brand.com/01/09506000134352/10/L_1/21/S%2F1?17=261231&sig=${sig}`);
  });

  it('round-trips through parseDigitalLink in both orders', () => {
    for (const order of ['spec', 'gs1'] as const)
      expect(parseDigitalLink(formatDigitalLink(link, order))).toEqual({ ok: true, link });
  });
});
