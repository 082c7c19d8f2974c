// Reads a new password for `plumb account password` (and a share password for `plumb site update`): from
// standard input (scripts), or asked twice on a terminal without echoing it.

import { createInterface } from 'node:readline';
import { AdminClientError } from './admin-client.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One trailing newline is what `echo` and here-strings add; it is not part of the password.
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

function ask(question: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    // Echo nothing of what is typed: only the question itself is written.
    const writer = rl as unknown as { _writeToOutput: (s: string) => void };
    let asked = false;
    writer._writeToOutput = (s: string) => {
      if (!asked) process.stderr.write(s);
    };
    rl.question(question, (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
    asked = true;
  });
}

/** `what` names the password in the prompts (a site's share password, too). */
export async function readPassword(fromStdin: boolean, what = 'New password'): Promise<string> {
  if (fromStdin) return readStdin();
  if (!process.stdin.isTTY) throw new AdminClientError('no terminal to ask for the password on: pipe it in with --password-stdin');
  const first = await ask(`${what}: `);
  const second = await ask(`${what} again: `);
  if (first !== second) throw new AdminClientError('the two passwords differ');
  return first;
}
