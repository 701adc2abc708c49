import type { Logger } from '@switchboard/kit';
import nodemailer from 'nodemailer';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

/** SMTP through nodemailer. Without SMTP_URL a mail cannot leave: that fails the step (retried). */
export function createMailer(smtpUrl: string | undefined, from: string, log: Logger): Mailer {
  if (!smtpUrl) {
    return {
      async send(mail) {
        log.error({ to: mail.to, subject: mail.subject }, 'SMTP_URL is not set; activation mail not sent');
        throw new Error('SMTP_URL is not set');
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
