// Whether the compiled output in dist/ is older than the sources it came from, and the build itself (the
// TypeScript compiled, the dashboard bundled into dist/web/): shared by `npm run build` (and `prepare`, at
// install), `npm start` and the `plumb` command, so a start compiles only when a source changed since the last
// build.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Written after every successful build; its time is the build's. */
export const STAMP = join('dist', '.build-stamp');

function newestSource(dir, newest = 0) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = newestSource(path, newest);
    else newest = Math.max(newest, statSync(path).mtimeMs); // TypeScript, and the dashboard's scripts and styles
  }
  return newest;
}

/** True when `root` has no build yet, or a source (anything under src/, tsconfig, package.json) is newer than it. */
export function isStale(root = ROOT) {
  const stamp = join(root, STAMP);
  if (!existsSync(stamp)) return true;
  const built = statSync(stamp).mtimeMs;
  const inputs = ['tsconfig.json', 'tsconfig.build.json', 'package.json']
    .map((f) => join(root, f))
    .filter(existsSync)
    .map((f) => statSync(f).mtimeMs);
  return Math.max(newestSource(join(root, 'src')), ...inputs) > built;
}

/** The path of tsc, or undefined when TypeScript is not installed (an install without dev dependencies). */
export function compiler(root = ROOT) {
  try {
    return createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    return undefined;
  }
}

/** Compiles src/ into dist/ with tsc and writes the stamp; returns false (tsc printed why) when it failed. */
export function build(root = ROOT) {
  const tsc = compiler(root);
  if (!tsc) {
    console.error('plumb: cannot compile: TypeScript is not installed (install with dev dependencies: npm ci)');
    return false;
  }
  const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) return false;
  // The dashboard bundle, made by the compiled server's own code so the two never differ in how they bundle.
  const bundled = spawnSync(process.execPath, ['--input-type=module', '-e', BUNDLE_DASHBOARD], { cwd: root, stdio: 'inherit', env: { ...process.env, PLUMB_BUILD_ROOT: root } });
  if (bundled.status !== 0) return false;
  writeFileSync(join(root, STAMP), `${new Date().toISOString()}\n`);
  return true;
}

/** Run in a child process (the build is synchronous): writes dist/web/app.js, app.css and fonts/ (only this build's). */
const BUNDLE_DASHBOARD = `
  import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
  import { join } from 'node:path';
  import { pathToFileURL } from 'node:url';
  const root = process.env.PLUMB_BUILD_ROOT;
  const { bundleDashboard } = await import(pathToFileURL(join(root, 'dist', 'src', 'http', 'dashboard', 'assets.js')).href);
  const { js, css, fonts } = await bundleDashboard();
  const web = join(root, 'dist', 'web');
  rmSync(join(web, 'fonts'), { recursive: true, force: true });
  mkdirSync(join(web, 'fonts'), { recursive: true });
  writeFileSync(join(web, 'app.js'), js);
  writeFileSync(join(web, 'app.css'), css);
  for (const font of fonts) writeFileSync(join(web, 'fonts', font.name), font.bytes);
`;

/** Builds only when stale; says so on standard error, since it takes a few seconds. */
export function buildIfStale(root = ROOT) {
  if (!isStale(root)) return true;
  console.error('plumb: compiling (the sources changed since the last build)…');
  return build(root);
}
