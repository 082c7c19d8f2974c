// Asks a yes-or-no question on the terminal before something that cannot be undone (`plumb site delete`).

import { createInterface } from 'node:readline';

/** True only for an answer of y or yes: anything else, an empty line or the end of input, keeps things as they are. */
export function askYesNo(question: string): Promise<boolean> {
  return new Promise((resolve) => {
    // The question on standard error, so that standard output stays the command's answer (--json).
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    let yes: boolean | undefined;
    rl.on('close', () => {
      if (yes === undefined) process.stderr.write('\n'); // Ctrl-D or Ctrl-C: end the prompt's line
      resolve(yes === true);
    });
    rl.question(question, (answer) => {
      yes = /^\s*y(es)?\s*$/i.test(answer);
      rl.close();
    });
  });
}
