// The dependency tree fits the Node.js versions package.json declares: a clean `npm ci` on any of them prints no
// engine warning (npm warns when a locked package's `engines.node` does not admit the running Node.js).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import semver from 'semver';
import { projectRoot } from '../src/project-root.js';

interface Locked {
  version?: string;
  engines?: { node?: string } | string[];
}

const read = (file: string): unknown => JSON.parse(readFileSync(join(projectRoot(), file), 'utf8'));

describe('dependencies', () => {
  it('every locked package admits every Node.js version package.json declares', () => {
    const declared = (read('package.json') as { engines: { node: string } }).engines.node;
    const packages = (read('package-lock.json') as { packages: Record<string, Locked> }).packages;
    const misfits: string[] = [];
    for (const [path, locked] of Object.entries(packages)) {
      const wanted = Array.isArray(locked.engines) ? undefined : locked.engines?.node;
      if (path === '' || wanted === undefined) continue;
      if (!semver.subset(declared, wanted)) misfits.push(`${path}@${locked.version} wants node ${wanted}`);
    }
    assert.deepEqual(misfits, [], `package.json declares node ${declared}`);
  });
});
