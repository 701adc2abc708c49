import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger };

/**
 * JSON logs on stdout (or `destination`); secrets in these paths never reach a log line. A
 * value that must be shown once on purpose (a generated first password) goes under a key of
 * its own, e.g. `generated_password`, so that the rule stays without exceptions.
 */
export function createLogger(service: string, level: string, destination?: DestinationStream): Logger {
  const options = {
    name: service,
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["d360-api-key"]',
        'password',
        'token',
        'secret',
        '*.password',
        '*.token',
        '*.secret',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
