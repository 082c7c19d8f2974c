// First run as a user does it: `npm start` runs the compiled server (and the dashboard bundle the build wrote)
// without compiling again, and
// `npx plumb demo` (bin/plumb.js) works against it with nothing set up: no PLUMB_ADMIN_TOKEN, no token at all.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
// @ts-expect-error: a plain ES module of the build scripts, without type declarations
import { build, isStale, STAMP } from '../../scripts/build-state.mjs';

const stampTime = () => statSync(STAMP).mtimeMs;

describe('first run', () => {
  let dataDir: string;
  let server: ReturnType<typeof spawn> | undefined;
  let output = '';
  let url = '';

  before(async () => {
    // The build at install (`prepare`); done here only when the sources changed since the last one.
    if (isStale()) assert.equal(build(), true, 'the build succeeds');
    dataDir = mkdtempSync(join(tmpdir(), 'plumb-first-run-'));
  });
  after(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts from the compiled output without running the compiler', async () => {
    const built = stampTime();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', PLUMB_DATA_DIR: dataDir, PLUMB_LOG_LEVEL: 'warn' };
    delete env.PLUMB_ADMIN_TOKEN;
    delete env.NODE_OPTIONS;
    server = spawn(process.execPath, ['scripts/start.mjs'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const child = server;
    url = await new Promise<string>((resolve, reject) => {
      const take = (d: Buffer) => {
        output += d.toString();
        const m = /Plumb listening on (http:\/\/[\d.:]+)/.exec(output);
        if (m) resolve(m[1]!);
      };
      child.stdout!.on('data', take);
      child.stderr!.on('data', take);
      child.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${output}`)));
    });
    assert.doesNotMatch(output, /compiling/);
    assert.equal(stampTime(), built, 'no build ran');
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
    // The first start's banner names the address where its token is used, and that address opens the setup form.
    const setup = /^ {2}Set up your dashboard login: open (\S+) and paste the token$/m.exec(output)?.[1];
    assert.equal(setup, `${url}/setup`, output);
    assert.match(await (await fetch(setup!)).text(), /Owner API token/);
    // The dashboard it serves is the bundle the build wrote (no bundling at start either).
    assert.equal(await (await fetch(`${url}/dashboard/app.js`)).text(), readFileSync('dist/web/app.js', 'utf8'));
  });

  it('runs `plumb demo` with nothing set up and prints an address that opens the report', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PLUMB_URL: url, PLUMB_DATA_DIR: dataDir };
    delete env.PLUMB_ADMIN_TOKEN;
    delete env.PLUMB_API_TOKEN;
    delete env.NODE_OPTIONS;
    const demo = spawnSync(process.execPath, ['bin/plumb.js', 'demo', '--days', '2', '--visits-per-day', '30'], { env, encoding: 'utf8' });
    assert.equal(demo.status, 0, demo.stderr);
    assert.doesNotMatch(demo.stderr, /compiling/);
    const address = /^Report: (\S+)/m.exec(demo.stdout)?.[1];
    assert.ok(address?.startsWith(`${url}/share/`), demo.stdout);
    const page = await fetch(address!);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Demo site/);
    // Without the key (another user, or another machine) the admin API stays closed, as before.
    assert.equal((await fetch(`${url}/admin/accounts`)).status, 404);
  });

  it('runs `npx plumb` in the project without rebuilding the server under its feet', () => {
    // The first `npx plumb` links the project into npx's cache, and npm runs `prepare` for it: with dist/ up to
    // date, that build must not run (it rewrote every file the running server loads, and took seconds).
    const cache = mkdtempSync(join(tmpdir(), 'plumb-npx-cache-'));
    const built = stampTime();
    const server = statSync('dist/src/main.js').mtimeMs;
    const env: NodeJS.ProcessEnv = { ...process.env, npm_config_cache: cache, npm_config_update_notifier: 'false' };
    delete env.NODE_OPTIONS;
    const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
    const help = spawnSync(npx, ['--yes', 'plumb', 'help'], { env, encoding: 'utf8' });
    rmSync(cache, { recursive: true, force: true });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^Usage: plumb <command>/);
    assert.equal(stampTime(), built, 'no build ran');
    assert.equal(statSync('dist/src/main.js').mtimeMs, server, 'the server\'s modules were left as they were');
  });

  it('keeps the local admin key to its user and removes it at a clean stop', async () => {
    const key = join(dataDir, 'local-admin.key');
    assert.equal(statSync(key).mode & 0o777, 0o600);
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    server!.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.equal(existsSync(key), false, 'a stopped server leaves no key behind');
  });
});

describe('build staleness', () => {
  it('is stale with no build, fresh after one, stale again once a source changes', () => {
    const root = mkdtempSync(join(tmpdir(), 'plumb-stale-'));
    mkdirSync(join(root, 'src', 'deep'), { recursive: true });
    writeFileSync(join(root, 'src', 'deep', 'a.ts'), 'export {};\n');
    writeFileSync(join(root, 'package.json'), '{}\n');
    const past = new Date(Date.now() - 60_000);
    utimesSync(join(root, 'src', 'deep', 'a.ts'), past, past);
    utimesSync(join(root, 'package.json'), past, past);
    assert.equal(isStale(root), true);
    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, STAMP), 'built\n');
    assert.equal(isStale(root), false);
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, 'src', 'deep', 'a.ts'), later, later);
    assert.equal(isStale(root), true);
    rmSync(root, { recursive: true, force: true });
  });
});
