// A real SMTP server in the test process (smtp-server) that keeps every delivered message, parsed by mailparser,
// so tests read invitations, resets and reports as a person's mailbox would.

import { setTimeout as sleep } from 'node:timers/promises';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface Mailbox {
  /** `smtp://127.0.0.1:PORT` for PLUMB_SMTP_URL. */
  url: string;
  readonly messages: ParsedMail[];
  /** Messages to this address, oldest first. */
  to(address: string): ParsedMail[];
  /** Waits (up to 15 s) for a message to this address matching the subject, and returns it. */
  waitFor(address: string, subject: RegExp, count?: number): Promise<ParsedMail>;
  close(): Promise<void>;
}

export const recipients = (m: ParsedMail) =>
  [m.to].flat().flatMap((a) => (a ? a.value.map((v) => (v.address ?? '').toLowerCase()) : []));

export async function startMailbox(): Promise<Mailbox> {
  const messages: ParsedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on loopback: no certificate to trust in tests.
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          messages.push(parsed);
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  const to = (address: string) => messages.filter((m) => recipients(m).includes(address.toLowerCase()));
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    to,
    async waitFor(address, subject, count = 1) {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const found = to(address).filter((m) => subject.test(m.subject ?? ''));
        if (found.length >= count) return found[count - 1]!;
        if (Date.now() > deadline) throw new Error(`no message to ${address} matching ${subject} (got: ${messages.map((m) => m.subject).join(', ')})`);
        await sleep(50);
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The first link in a message's plain text that starts with `prefix`. */
export function linkIn(m: ParsedMail, prefix: string): string {
  const match = new RegExp(`${prefix.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}[^\\s]+`).exec(m.text ?? '');
  if (!match) throw new Error(`no link starting with ${prefix} in: ${m.text}`);
  return match[0];
}
