// `npm run build`, and `prepare` (which npm runs after `npm ci`): compiles src/ into dist/ once.
// `--at-install`: an install without dev dependencies has no TypeScript; it keeps whatever dist/ it has.
import { build, compiler } from './build-state.mjs';

if (process.argv.includes('--at-install') && !compiler()) {
  console.error('plumb: TypeScript is not installed, so dist/ was not compiled at install');
} else {
  process.exitCode = build() ? 0 : 1;
}
