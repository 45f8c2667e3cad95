import { describe, expect, it } from 'vitest';
import { withTrustedCaFile } from './postgres-url.ts';

describe('withTrustedCaFile (HALLMARK_TLS_CA_FILE for PostgreSQL)', () => {
  const ca = '/etc/hallmark/ca dir/ca.pem';
  const encoded = 'sslrootcert=%2Fetc%2Fhallmark%2Fca%20dir%2Fca.pem';

  it('adds sslrootcert when the URL asks for TLS and names none', () => {
    expect(withTrustedCaFile('postgres://app:p%40ss@db:5432/hallmark?sslmode=verify-full', ca)).toBe(
      `postgres://app:p%40ss@db:5432/hallmark?sslmode=verify-full&${encoded}`,
    );
    for (const mode of ['prefer', 'require', 'verify-ca']) {
      expect(withTrustedCaFile(`postgres://db/h?sslmode=${mode}`, ca)).toBe(`postgres://db/h?sslmode=${mode}&${encoded}`);
    }
    expect(withTrustedCaFile('postgresql://db/h?ssl=true', ca)).toBe(`postgresql://db/h?ssl=true&${encoded}`);
    expect(withTrustedCaFile('postgresql://db/h?ssl=1&application_name=x', ca)).toBe(
      `postgresql://db/h?ssl=1&application_name=x&${encoded}`,
    );
  });

  it('leaves the URL alone when it asks for no TLS, names its own sslrootcert, or there is no CA file', () => {
    for (const url of [
      'postgres://db/h',
      'postgres://db/h?sslmode=disable',
      'postgres://db/h?ssl=true&sslmode=disable',
      'postgres://db/h?sslmode=no-verify',
      'postgres://db/h?ssl=false',
      'postgres://db/h?sslmode=verify-full&sslrootcert=/own/ca.pem',
    ]) {
      expect(withTrustedCaFile(url, ca)).toBe(url);
    }
    expect(withTrustedCaFile('postgres://db/h?sslmode=verify-full', undefined)).toBe('postgres://db/h?sslmode=verify-full');
    expect(withTrustedCaFile('/var/run/postgresql hallmark', ca)).toBe('/var/run/postgresql hallmark');
  });
});
