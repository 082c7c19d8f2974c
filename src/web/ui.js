// The component toolkit of the dashboard: Preact with htm tagged templates (no JSX, so esbuild only bundles).
//
//   import { html, useState } from './ui.js';
//   export function Hello({ name }) { return html`<p class="muted">Hello ${name}</p>`; }
//
// Text in templates is always escaped by Preact: data from the API can never turn into markup.

import htm from 'htm';
import { Component, createContext, Fragment, h, render } from 'preact';

export const html = htm.bind(h);
export { Component, createContext, Fragment, h, render };
export { useCallback, useContext, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
