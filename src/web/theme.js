// Light or dark: follows the system (prefers-color-scheme) unless the viewer picks one; the pick is kept in this
// browser (localStorage) and applied as <html data-theme>, which style.css reads.

import { Icon } from './icons.js';
import { createStore, useStore } from './store.js';
import { html } from './ui.js';

const KEY = 'plumb-theme';
const CHOICES = ['auto', 'light', 'dark'];
const media = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : undefined;

function stored() {
  try {
    const value = localStorage.getItem(KEY);
    return CHOICES.includes(value) ? value : 'auto';
  } catch {
    return 'auto';
  }
}

const resolve = (choice) => (choice === 'auto' ? (media?.matches ? 'dark' : 'light') : choice);

/** { choice: 'auto' | 'light' | 'dark', dark: boolean }: what the viewer chose and what is shown. */
export const theme = createStore({ choice: stored(), dark: resolve(stored()) === 'dark' });

function apply(choice) {
  if (choice === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = choice;
  theme.set({ choice, dark: resolve(choice) === 'dark' });
}

export function setTheme(choice) {
  try {
    if (choice === 'auto') localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, choice);
  } catch {
    // Storage refused (private mode): the choice holds for this page only.
  }
  apply(choice);
}

export function startTheme() {
  apply(stored());
  media?.addEventListener('change', () => apply(theme.get().choice));
}

const NEXT = { auto: 'light', light: 'dark', dark: 'auto' };
const ICON = { auto: 'monitor', light: 'sun', dark: 'moon' };
const LABEL = { auto: 'Theme: system', light: 'Theme: light', dark: 'Theme: dark' };

/** A button in the top bar cycling system → light → dark. */
export function ThemeSwitch() {
  const { choice } = useStore(theme);
  return html`<button type="button" class="link theme-switch" data-theme-switch=${choice}
    title="Switch between the system's colours, light and dark" onClick=${() => setTheme(NEXT[choice])}><${Icon} name=${ICON[choice]} />${LABEL[choice]}</button>`;
}
