import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** PEM files of a throwaway certificate authority, made by `makeTestCertificates`. */
export interface TestCertificates {
  /** The CA that signed `serverCert`. */
  caFile: string;
  /** For 127.0.0.1 and localhost only (not ::1), valid one day. */
  serverCertFile: string;
  serverKeyFile: string;
  /** A second CA that signed nothing here: trusting it must not be enough. */
  otherCaFile: string;
}

/**
 * A CA and a server certificate it signed, made with openssl in `folder` (which the caller
 * removes). Throws when openssl is missing or fails; each call is bounded to 20 s.
 */
export function makeTestCertificates(folder: string): TestCertificates {
  const file = (name: string) => join(folder, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe', timeout: 20_000 });
  const selfSigned = (subject: string, key: string, cert: string) =>
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', subject, '-keyout', key, '-out', cert);
  selfSigned('/CN=Hallmark test CA', file('ca.key'), file('ca.pem'));
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    file('server.key'),
    '-out',
    file('server.csr'),
  );
  writeFileSync(file('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(
    'x509',
    '-req',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    file('san.ext'),
    '-out',
    file('server.pem'),
  );
  selfSigned('/CN=Other CA', file('other.key'), file('other.pem'));
  return {
    caFile: file('ca.pem'),
    serverCertFile: file('server.pem'),
    serverKeyFile: file('server.key'),
    otherCaFile: file('other.pem'),
  };
}
