// `plumb` (bin/plumb.js) as a user runs it beside a real server process: it finds the server the way the server
// was configured (PLUMB_URL, else PORT/HOST, else the address the server wrote into its data directory), never
// builds dist/ (even when the sources are newer), says a usage mistake in a few lines, and asks before deleting a
// site on a terminal (a real one: `script` gives the CLI a pseudo-terminal).

import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { credentials } from '../../src/cli/credentials.js';
import { LOCAL_SERVER_FILE, localServerUrl } from '../../src/local-admin-key.js';
// @ts-expect-error: a plain ES module of the build scripts, without type declarations
import { build, isStale, ROOT } from '../../scripts/build-state.mjs';

const BIN = join(ROOT, 'bin', 'plumb.js');
const STALE_NOTE = /^plumb: note: sources changed since the last build; this runs the built CLI \(`npm run build` updates it\)\n/;

/** A port nothing listens on now (the system's pick, released at once). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The environment of a user's shell: none of Plumb's settings unless given. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (/^PLUMB_|^PORT$|^HOST$|^NODE_OPTIONS$/.test(name)) delete env[name];
  return { ...env, ...extra };
}

/** Every file under `dir` with its modification time and content hash. */
function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path);
      else files.set(relative(dir, path), `${statSync(path).mtimeMs} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`);
    }
  };
  walk(dir);
  return files;
}

describe('the plumb command beside a running server', () => {
  /** Stands for the project folder: the server's data directory is its ./data, as with `npm start`. */
  let folder: string;
  let dataDir: string;
  let port: number;
  let server: ChildProcess;
  let output = '';
  let distBefore: Map<string, string>;

  /** Standard error without the note a build older than the sources adds (others may be editing src/ meanwhile). */
  const plumb = (args: string[], env: Record<string, string> = {}, { cwd = folder, bin = BIN, keepNote = false } = {}) => {
    const res = spawnSync(process.execPath, [bin, ...args], { cwd, env: userEnv(env), encoding: 'utf8' });
    return keepNote ? res : { ...res, stderr: res.stderr.replace(STALE_NOTE, '') };
  };

  before(async () => {
    if (isStale()) assert.equal(build(), true, 'the build succeeds');
    distBefore = snapshot(join(ROOT, 'dist'));
    folder = mkdtempSync(join(tmpdir(), 'plumb-cli-folder-'));
    dataDir = join(folder, 'data');
    port = await freePort();
    // The compiled server, started as `PORT=... npm start` starts it (without the build check: this test must not
    // build while it watches dist/).
    server = spawn(process.execPath, [join(ROOT, 'dist', 'src', 'main.js')], {
      cwd: folder,
      env: userEnv({ PORT: String(port), HOST: '127.0.0.1', PLUMB_LOG_LEVEL: 'warn' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const child = server;
    await new Promise<void>((resolve, reject) => {
      const take = (d: Buffer) => {
        output += d.toString();
        if (/Plumb listening on/.test(output)) resolve();
      };
      child.stdout!.on('data', take);
      child.stderr!.on('data', take);
      child.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${output}`)));
    });
  });
  after(async () => {
    if (server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(folder, { recursive: true, force: true });
  });

  it('finds the server from the same PORT the server was started with', async () => {
    const created = plumb(['site', 'create', '--name', 'Found by PORT', '--json'], { PORT: String(port) });
    assert.equal(created.status, 0, created.stderr);
    assert.equal(JSON.parse(created.stdout).name, 'Found by PORT');
    // HOST as the server reads it: 127.0.0.1 here, and 0.0.0.0 (every interface) is reached at 127.0.0.1.
    const withHost = plumb(['site', 'list'], { PORT: String(port), HOST: '0.0.0.0' });
    assert.equal(withHost.status, 0, withHost.stderr);
    assert.match(withHost.stdout, /Found by PORT/);
  });

  it('finds the local server from the project folder with nothing set, through the address it wrote', () => {
    assert.equal(readFileSync(join(dataDir, LOCAL_SERVER_FILE), 'utf8'), `http://127.0.0.1:${port}\n`);
    const list = plumb(['site', 'list']);
    assert.equal(list.status, 0, list.stderr);
    assert.match(list.stdout, /Found by PORT/);
  });

  it('takes PLUMB_URL first, then PORT/HOST, and says where the address it cannot reach came from', async () => {
    const elsewhere = await freePort();
    const byUrl = plumb(['site', 'list'], { PLUMB_URL: `http://127.0.0.1:${elsewhere}`, PORT: String(port) });
    assert.equal(byUrl.status, 1);
    assert.equal(byUrl.stderr, `plumb: cannot reach Plumb at http://127.0.0.1:${elsewhere} (connect ECONNREFUSED 127.0.0.1:${elsewhere}); is it running? The address is set by PLUMB_URL\n`);
    const byPort = plumb(['site', 'list'], { PORT: String(elsewhere) });
    assert.equal(byPort.status, 1);
    assert.match(byPort.stderr, new RegExp(`cannot reach Plumb at http://127\\.0\\.0\\.1:${elsewhere} .*made from PORT/HOST`));
  });

  it('says a usage mistake in a few lines and exits 2', () => {
    const res = plumb(['site', 'create']);
    assert.equal(res.status, 2);
    assert.equal(
      res.stderr,
      'plumb: missing --name\nusage: plumb site create --name NAME [--timezone ZONE] [--domain HOSTS] [--account ID] [--json]\nsee `plumb help site`\n',
    );
    assert.equal(res.stdout, '');
  });

  it('deletes a site only when confirmed on a terminal, or with --yes; refuses without a terminal', () => {
    const make = (name: string) => JSON.parse(plumb(['site', 'create', '--name', name, '--json']).stdout).id as string;
    const exists = (id: string) => plumb(['site', 'show', id]).status === 0;
    const id = make('Keep me');
    // Standard input is no terminal here (spawnSync's pipe): refused before anything is asked of the server.
    const piped = plumb(['site', 'delete', id]);
    assert.equal(piped.status, 2);
    assert.match(piped.stderr, /^plumb: not deleting without confirmation: standard input is not a terminal to ask on \(add --yes\)\nusage: plumb site delete /);
    assert.equal(exists(id), true);

    // On a terminal: the answer typed decides.
    const onTerminal = (siteId: string, typed: string) =>
      spawnSync('script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} site delete ${siteId}`, '/dev/null'], {
        cwd: folder,
        env: userEnv(),
        input: typed,
        encoding: 'utf8',
      });
    const declined = onTerminal(id, 'n\n');
    assert.equal(declined.status, 1, declined.stdout);
    assert.match(declined.stdout, new RegExp(`Delete site ${id} \\("Keep me"\\) with its goals, milestones and every hit\\? This cannot be undone\\. \\[y/N\\]`));
    assert.match(declined.stdout, /nothing deleted/);
    assert.equal(exists(id), true);
    const confirmed = onTerminal(id, 'y\n');
    assert.equal(confirmed.status, 0, confirmed.stdout);
    assert.match(confirmed.stdout, new RegExp(`deleted site ${id} \\("Keep me"\\)`));
    assert.equal(exists(id), false);

    const scripted = make('Scripted');
    const yes = plumb(['site', 'delete', scripted, '--yes']);
    assert.equal(yes.status, 0, yes.stderr);
    assert.equal(exists(scripted), false);
  });

  it('never builds: with sources newer than the build it says so and runs the build it has', () => {
    // A copy of the project whose sources changed after its build, as after an edit or a `git pull`.
    const copy = mkdtempSync(join(tmpdir(), 'plumb-cli-stale-'));
    try {
      for (const part of ['bin', 'scripts', 'src', 'dist', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) {
        cpSync(join(ROOT, part), join(copy, part), { recursive: true, preserveTimestamps: true });
      }
      symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
      const later = new Date(Date.now() + 60_000);
      utimesSync(join(copy, 'src', 'cli', 'main.ts'), later, later);
      const before = snapshot(join(copy, 'dist'));
      const list = plumb(['site', 'list'], { PORT: String(port) }, { bin: join(copy, 'bin', 'plumb.js'), keepNote: true });
      assert.equal(list.status, 0, list.stderr);
      assert.match(list.stdout, /Found by PORT/);
      assert.match(list.stderr, STALE_NOTE);
      assert.deepEqual(snapshot(join(copy, 'dist')), before, 'dist/ is untouched');

      // No build at all: it says how to make one, and makes none.
      rmSync(join(copy, 'dist'), { recursive: true });
      const none = plumb(['help'], {}, { bin: join(copy, 'bin', 'plumb.js') });
      assert.equal(none.status, 1);
      assert.match(none.stderr, /the CLI is not built yet .*run `npm run build` in /);
      assert.equal(existsSync(join(copy, 'dist')), false);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it("leaves the running server's dist/ as it was after every command above", () => {
    assert.deepEqual(snapshot(join(ROOT, 'dist')), distBefore);
  });

  it('removes the address at a clean stop', async () => {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.equal(existsSync(join(dataDir, LOCAL_SERVER_FILE)), false);
  });
});

describe('where the CLI looks for the server', () => {
  it('reaches a server on every interface or on a named host at the address a client uses', () => {
    assert.equal(localServerUrl('0.0.0.0', 8080), 'http://127.0.0.1:8080');
    assert.equal(localServerUrl('::', 18080), 'http://[::1]:18080');
    assert.equal(localServerUrl('::1', 18080), 'http://[::1]:18080');
    assert.equal(localServerUrl('[::1]', 18080), 'http://[::1]:18080');
    assert.equal(localServerUrl('127.0.0.2', 80), 'http://127.0.0.2:80');
    assert.equal(localServerUrl('localhost', 3000), 'http://localhost:3000');
  });

  it('takes PLUMB_URL, then PORT and HOST, then the written address, then the default', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plumb-cli-address-'));
    try {
      mkdirSync(join(dir, 'data'));
      writeFileSync(join(dir, 'data', LOCAL_SERVER_FILE), 'http://127.0.0.1:18081\n');
      const data = { PLUMB_DATA_DIR: join(dir, 'data') };
      const url = (env: Record<string, string>) => credentials(env).url;
      assert.equal(url({ ...data, PLUMB_URL: 'http://plumb.example.test/', PORT: '18080' }), 'http://plumb.example.test');
      assert.equal(url({ ...data, PORT: '18080' }), 'http://127.0.0.1:18080');
      assert.equal(url({ ...data, HOST: '127.0.0.3' }), 'http://127.0.0.3:8080', 'HOST alone: the default port');
      assert.equal(url({ ...data, PORT: '18080', HOST: '0.0.0.0' }), 'http://127.0.0.1:18080');
      assert.equal(url({ ...data, PORT: '0' }), 'http://127.0.0.1:18081', 'PORT=0 says nothing of the port');
      assert.equal(url(data), 'http://127.0.0.1:18081');
      assert.equal(url({ PLUMB_DATA_DIR: join(dir, 'none') }), 'http://127.0.0.1:8080');
      writeFileSync(join(dir, 'data', LOCAL_SERVER_FILE), 'not an address\n');
      assert.equal(url(data), 'http://127.0.0.1:8080', 'a damaged file is no address');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
