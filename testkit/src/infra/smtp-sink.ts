import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  /** The text/plain body, transfer encoding undone. */
  text: string;
  raw: string;
}

export interface SmtpSink {
  readonly url: string;
  readonly mails: ReceivedMail[];
  close(): Promise<void>;
}

function decodeQuotedPrintable(s: string): string {
  const bytes = s
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/** Enough MIME for the plain-text mails the inbox sends: headers, one text part, QP/base64. */
export function parseMail(raw: string): Pick<ReceivedMail, 'subject' | 'text'> {
  const split = raw.search(/\r?\n\r?\n/);
  const head = split >= 0 ? raw.slice(0, split) : raw;
  const body = split >= 0 ? raw.slice(split).replace(/^\r?\n\r?\n/, '') : '';
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(unfolded)?.[1]?.trim() ?? '';
  const encoding = header('Content-Transfer-Encoding').toLowerCase();
  const text =
    encoding === 'quoted-printable'
      ? decodeQuotedPrintable(body)
      : encoding === 'base64'
        ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
        : body;
  return { subject: header('Subject'), text };
}

/**
 * A real SMTP server on loopback that keeps what it receives: the local stand-in for a mail
 * provider (`npm start`) and the mailbox tests read login links from.
 */
export async function startSmtpSink(
  opts: {
    port?: number;
    onMail?: (m: ReceivedMail) => void;
    /** Recipients to refuse (550), as a mail provider refuses a mailbox it cannot deliver to now. */
    refuse?: (to: string) => boolean;
  } = {},
): Promise<SmtpSink> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (!opts.refuse?.(address.address)) return callback();
      callback(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          ...parseMail(raw),
          raw,
        };
        mails.push(mail);
        opts.onMail?.(mail);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const addr = server.server.address();
  if (!addr || typeof addr === 'string') throw new Error('SMTP sink has no port');
  return {
    url: `smtp://127.0.0.1:${addr.port}`,
    mails,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
