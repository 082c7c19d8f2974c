// `npm run build`, and `prepare` (which npm runs after `npm ci`): compiles src/ into dist/ once.
// `--at-install`: an install without dev dependencies has no TypeScript; it keeps whatever dist/ it has. And npm
// runs `prepare` again whenever it installs this folder as a dependency, which is what the first `npx plumb` in the
// project does (it links the project into npx's cache): at install, an up-to-date dist/ is left as it is, so that
// no CLI call rewrites the files a running server loads its modules from.
import { build, compiler, isStale } from './build-state.mjs';

const atInstall = process.argv.includes('--at-install');
if (atInstall && !compiler()) {
  console.error('plumb: TypeScript is not installed, so dist/ was not compiled at install');
} else if (!atInstall || isStale()) {
  process.exitCode = build() ? 0 : 1;
}
