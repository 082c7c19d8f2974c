// The dashboard's script (bundled by esbuild into /dashboard/app.js): starts the shell once the page is parsed.

import { start } from './shell.js';

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => void start());
else void start();
