// `npm start` limits glibc's malloc arenas (MALLOC_ARENA_MAX=2) in the server it starts unless the operator set
// their own value, and a value glibc would silently ignore stops the server with a message saying so; on two cores
// or fewer it starts the server with V8's single-threaded garbage collection (PLUMB_SINGLE_THREADED_GC overrides).

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
// @ts-expect-error: a plain ES module of the build scripts, without type declarations
import { build, isStale } from '../../scripts/build-state.mjs';

/** The processes below `pid`, depth first (Linux /proc). */
function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter((c) => c !== '').map(Number);
  } catch {
    return [];
  }
  return children.flatMap((c) => [c, ...descendants(c)]);
}

/** The environment a running process started with. */
const environOf = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');

describe('npm start', () => {
  const dirs: string[] = [];
  const running: ChildProcess[] = [];

  before(() => {
    if (isStale()) assert.equal(build(), true, 'the build succeeds');
  });
  after(async () => {
    for (const npm of running) {
      if (npm.exitCode !== null) continue;
      const exited = new Promise((resolve) => npm.once('exit', resolve));
      for (const pid of descendants(npm.pid!)) process.kill(pid, 'SIGTERM');
      await exited;
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `npm start` with `extra` in its environment until the server listens (or exits); the server's process. */
  function npmStart(extra: Record<string, string>): Promise<{ npm: ChildProcess; server?: number; output: string; code?: number | null }> {
    const dir = mkdtempSync(join(tmpdir(), 'plumb-npm-start-'));
    dirs.push(dir);
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', PLUMB_DATA_DIR: dir, PLUMB_LOG_LEVEL: 'warn', ...extra };
    delete env.NODE_OPTIONS;
    if (!('MALLOC_ARENA_MAX' in extra)) delete env.MALLOC_ARENA_MAX;
    if (!('PLUMB_SINGLE_THREADED_GC' in extra)) delete env.PLUMB_SINGLE_THREADED_GC;
    const npm = spawn('npm', ['start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.push(npm);
    let output = '';
    return new Promise((resolve) => {
      const take = (d: Buffer) => {
        output += d.toString();
        if (!/Plumb listening on/.test(output)) return;
        const server = descendants(npm.pid!).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('scripts/start.mjs'));
        resolve({ npm, server, output });
      };
      npm.stdout!.on('data', take);
      npm.stderr!.on('data', take);
      npm.once('exit', (code) => resolve({ npm, output, code }));
    });
  }

  it('starts the server with MALLOC_ARENA_MAX=2 when it is not set', async () => {
    const { server, output } = await npmStart({});
    assert.ok(server, output);
    assert.ok(environOf(server).includes('MALLOC_ARENA_MAX=2'), 'the server runs with two malloc arenas');
  });

  it('keeps the operator\'s own MALLOC_ARENA_MAX', async () => {
    const { server, output } = await npmStart({ MALLOC_ARENA_MAX: '4' });
    assert.ok(server, output);
    const environ = environOf(server);
    assert.ok(environ.includes('MALLOC_ARENA_MAX=4'));
    assert.ok(!environ.includes('MALLOC_ARENA_MAX=2'));
  });

  it('collects garbage on one thread, with a full-size young generation, on a machine of two cores or fewer, unless told otherwise', async () => {
    const argsOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const { server, output } = await npmStart({});
    assert.ok(server, output);
    assert.equal(argsOf(server).includes('--single-threaded-gc'), availableParallelism() <= 2);
    assert.equal(argsOf(server).includes('--min-semi-space-size=16'), availableParallelism() <= 2);
    const on = await npmStart({ PLUMB_SINGLE_THREADED_GC: 'on' });
    assert.ok(on.server, on.output);
    assert.ok(argsOf(on.server).includes('--single-threaded-gc'));
    assert.ok(argsOf(on.server).includes('--min-semi-space-size=16'));
    const off = await npmStart({ PLUMB_SINGLE_THREADED_GC: 'off' });
    assert.ok(off.server, off.output);
    assert.ok(!argsOf(off.server).includes('--single-threaded-gc'));
    assert.ok(!argsOf(off.server).includes('--min-semi-space-size=16'));
    const typo = await npmStart({ PLUMB_SINGLE_THREADED_GC: 'yes' });
    assert.notEqual(typo.code, 0);
    assert.match(typo.output, /PLUMB_SINGLE_THREADED_GC must be on or off, or unset to decide by the number of cores \(got "yes"\)/);
  });

  it('refuses to start with a value glibc would ignore, saying why', async () => {
    const { code, output } = await npmStart({ MALLOC_ARENA_MAX: 'two' });
    assert.notEqual(code, 0);
    assert.match(output, /MALLOC_ARENA_MAX must be a whole number of malloc arenas from 1 to 9999, such as 2 \(got "two"\)/);
  });
});
