import { type Logger, pino } from 'pino';

export type { Logger };

/**
 * Paths that may hold secrets. Values under them are replaced before a line is written,
 * wherever a caller put them. test/e2e/auth.test.ts searches the logs of a full run for every secret.
 */
const redactPaths = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.secret',
  '*.apiKey',
  '*.privateKey',
  '*.transferCode',
  '*.keyHash',
  '*.password',
];

export interface LoggerOptions {
  /** Left out where one process hosts several services: each then logs through a child naming it. */
  service?: string;
  instance: string;
  level: string;
  /** Where lines go; standard output by default. */
  destination?: pino.DestinationStream;
}

/** JSON lines, one per event, with the service and instance on every line. Secrets are redacted. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base:
        options.service === undefined ? { instance: options.instance } : { service: options.service, instance: options.instance },
      redact: { paths: redactPaths, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    options.destination ?? pino.destination({ sync: false }),
  );
}
