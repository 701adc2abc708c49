import { type Logger, pino } from 'pino';

export type { Logger };

/** JSON logs on stdout; secrets in these paths never reach a log line. */
export function createLogger(service: string, level: string): Logger {
  return pino({
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
  });
}
