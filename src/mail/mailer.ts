// Outgoing mail through SMTP (nodemailer), configured by PLUMB_SMTP_URL and PLUMB_MAIL_FROM; without them, a mailer
// that says it is not configured, so features that need mail can tell the person instead.

import type { Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';

export interface Mail {
  to: string;
  subject: string;
  /** Both parts always: the plain text for every client, the HTML for those that show it. */
  text: string;
  html: string;
  headers?: Record<string, string>;
}

export interface Mailer {
  readonly configured: boolean;
  /** Sends or throws (the SMTP server refused or could not be reached). */
  send(mail: Mail): Promise<void>;
  close(): void;
}

export class SmtpMailer implements Mailer {
  readonly configured = true;
  // nodemailer is loaded here, not with this module: a server without mail never needs it, and loading it was a
  // tenth of a second of every start (README, start to ready).
  private readonly transport: Promise<Transporter<SMTPTransport.SentMessageInfo>>;
  constructor(smtpUrl: string, from: string) {
    // A slow or unreachable server fails the send instead of holding a request for minutes.
    const options: SMTPTransport.Options = { connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 30_000 };
    const settings = { ...smtpOptions(smtpUrl), ...options }; // a malformed URL still throws here, at start
    this.transport = import('nodemailer').then(({ createTransport }) => createTransport(settings, { from }));
  }
  async send(mail: Mail): Promise<void> {
    await (await this.transport).sendMail({ to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, headers: mail.headers ?? {} });
  }
  close(): void {
    void this.transport.then((transport) => transport.close());
  }
}

export const NO_MAILER: Mailer = {
  configured: false,
  send: () => Promise.reject(new Error('Outgoing mail is not configured (PLUMB_SMTP_URL)')),
  close: () => undefined,
};

/** The URL's parts as nodemailer's options (`smtps://` is TLS from the start, `smtp://` upgrades with STARTTLS). */
function smtpOptions(smtpUrl: string): SMTPTransport.Options {
  const u = new URL(smtpUrl);
  const secure = u.protocol === 'smtps:';
  return {
    host: u.hostname,
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    ...(u.username ? { auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } } : {}),
  };
}
