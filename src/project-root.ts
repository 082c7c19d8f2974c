// The project's root directory, found from this file whether it runs from src/ (tests) or dist/src/ (npm start).

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the project root (no package.json above this file)');
    dir = parent;
  }
  return dir;
}
