import nodemailer from 'nodemailer';
import type { Logger } from './logger.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

/**
 * SMTP through nodemailer. Without SMTP_URL a mail cannot leave: that is logged per attempt,
 * and with `failWithoutSmtp` the send also fails (a step that must deliver its mail is retried).
 */
export function createMailer(
  smtpUrl: string | undefined,
  from: string,
  log: Logger,
  opts: { failWithoutSmtp?: boolean } = {},
): Mailer {
  if (!smtpUrl) {
    return {
      async send(mail) {
        log.error({ to: mail.to, subject: mail.subject }, 'SMTP_URL is not set; mail not sent');
        if (opts.failWithoutSmtp) throw new Error('SMTP_URL is not set');
      },
      close() {},
    };
  }
  const transport = nodemailer.createTransport(smtpUrl);
  return {
    async send(mail) {
      await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text });
    },
    close() {
      transport.close();
    },
  };
}
