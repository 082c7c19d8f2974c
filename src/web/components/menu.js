// A menu button: a button naming the current choice that opens a list of choices (role="menu", one
// menuitemradio each). Keyboard as the ARIA menu button pattern: Enter, Space or ArrowDown open it on the chosen
// item, arrows/Home/End move, Enter or Space picks, Escape or Tab closes, focus back on the button.
//
//   <${Menu} label="Compare with" value=${state.compare} options=${[['previous', 'Previous period'], ...]}
//     onSelect=${(key) => ...} />
//
// `label` is the button's accessible name prefix ("Compare with: Previous period"); `text` replaces the visible
// text (default: the chosen option's); `icon` puts an icon before it; `name` becomes data-menu for tests/styles.

import { Icon } from '../icons.js';
import { html, useEffect, useRef, useState } from '../ui.js';
import { useId } from '../forms.js';

export function Menu({ label, value, options, onSelect, text, icon, name, class: extra = '', align = 'start' }) {
  const [open, setOpen] = useState(false);
  const button = useRef(null);
  const list = useRef(null);
  const id = useId('menu');
  const chosen = options.find(([k]) => k === value);
  const shown = text ?? (chosen ? chosen[1] : label);
  const items = () => [...(list.current?.querySelectorAll('[role^=menuitem]') ?? [])];
  const close = (refocus = true) => {
    setOpen(false);
    if (refocus) button.current?.focus();
  };
  useEffect(() => {
    if (!open) return undefined;
    const all = items();
    (all.find((el) => el.getAttribute('aria-checked') === 'true') ?? all[0])?.focus();
    // A click anywhere else closes it, as a native select does.
    const outside = (e) => {
      if (!list.current?.contains(e.target) && !button.current?.contains(e.target)) setOpen(false);
    };
    document.addEventListener('pointerdown', outside);
    return () => document.removeEventListener('pointerdown', outside);
  }, [open]);
  const onButtonKey = (e) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      setOpen(true);
    }
  };
  const onListKey = (e) => {
    const all = items();
    const i = all.indexOf(document.activeElement);
    const to = { ArrowDown: i + 1, ArrowUp: i - 1, Home: 0, End: all.length - 1 }[e.key];
    if (to !== undefined) {
      e.preventDefault();
      all[(to + all.length) % all.length]?.focus();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      close();
    } else if (e.key === 'Tab') close(false);
  };
  const pick = (key) => {
    close();
    if (key !== value) onSelect(key);
  };
  return html`<div class=${`menu ${extra}`} data-menu=${name}>
    <button type="button" class="menu-button" ref=${button} aria-haspopup="menu" aria-expanded=${open ? 'true' : 'false'}
      aria-controls=${id} aria-label=${`${label}: ${chosen ? chosen[1] : shown}`} onClick=${() => setOpen(!open)} onKeyDown=${onButtonKey}>
      ${icon ? html`<${Icon} name=${icon} />` : null}<span class="menu-text">${shown}</span><${Icon} name="chevron-down" size=${14} />
    </button>
    <ul role="menu" id=${id} class=${`menu-list align-${align}`} ref=${list} hidden=${!open} aria-label=${label} onKeyDown=${onListKey}>
      ${options.map(([k, t]) => html`<li role="menuitemradio" tabindex="-1" aria-checked=${k === value ? 'true' : 'false'} data-option=${k}
        onClick=${() => pick(k)} onKeyDown=${(e) => (e.key === 'Enter' || e.key === ' ') && (e.preventDefault(), pick(k))}>
        <span class="menu-check">${k === value ? html`<${Icon} name="check" size=${14} />` : null}</span>${t}</li>`)}
    </ul>
  </div>`;
}
