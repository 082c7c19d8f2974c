// Where uploaded export zips wait (src/ingest/peer-imports/import-spool.ts): at start, a data directory's spool is
// emptied (it is one process's alone), and in the system's temporary directory only spools of processes that no longer
// exist go, with those of earlier versions once a day old; a live process's spool stays.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ImportSpool } from '../../../src/ingest/peer-imports/import-spool.js';

describe('ImportSpool', () => {
  const root = mkdtempSync(join(tmpdir(), 'plumb-spool-test-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  const spoolWithFile = (dir: string) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'export.zip'), 'PK');
    return dir;
  };

  it("empties a data directory's spool at start and makes new spools in it", async () => {
    const dataDir = join(root, 'data');
    const left = spoolWithFile(join(dataDir, 'import-spool', 'import-AbC123'));
    const spool = await ImportSpool.open(dataDir, join(root, 'tmp-a'));
    assert.equal(existsSync(left), false);
    const made = await spool.make();
    assert.equal(dirname(made), join(dataDir, 'import-spool'));
    assert.deepEqual(readdirSync(join(dataDir, 'import-spool')), [made.slice(made.lastIndexOf('/') + 1)]);
  });

  it('removes temporary spools of dead processes and day-old ones of earlier versions, never a live one', async () => {
    const temp = join(root, 'tmp-b');
    mkdirSync(temp);
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const ofDead = spoolWithFile(join(temp, `plumb-import-${dead}-Xy12Zq`));
    const ofLive = spoolWithFile(join(temp, `plumb-import-${process.ppid}-Ab34Cd`));
    const ofMine = spoolWithFile(join(temp, `plumb-import-${process.pid}-Ef56Gh`));
    const oldUnowned = spoolWithFile(join(temp, 'plumb-import-Qw78Er'));
    const dayAgo = (Date.now() - 25 * 3_600_000) / 1000;
    utimesSync(oldUnowned, dayAgo, dayAgo);
    const recentUnowned = spoolWithFile(join(temp, 'plumb-import-Ty90Ui'));
    const unrelated = spoolWithFile(join(temp, 'plumb-fathom-Op12As'));

    const spool = await ImportSpool.open(undefined, temp);
    assert.deepEqual(
      [ofDead, ofLive, ofMine, oldUnowned, recentUnowned, unrelated].map(existsSync),
      [false, true, true, false, true, true],
    );
    const made = await spool.make();
    assert.match(made.slice(temp.length + 1), new RegExp(`^plumb-import-${process.pid}-[A-Za-z0-9]{6}$`));
  });
});
