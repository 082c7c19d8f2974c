// A modal dialog (the native <dialog> opened with showModal: focus kept inside, Escape closes, the page behind
// inert) with a title and a close button.
//
//   ${open ? html`<${Dialog} title="Right now" onClose=${() => setOpen(false)}>…<//>` : null}

import { Icon } from '../icons.js';
import { html, useEffect, useRef } from '../ui.js';
import { useId } from '../forms.js';

export function Dialog({ title, onClose, class: extra = '', children }) {
  const box = useRef(null);
  const id = useId('dialog');
  useEffect(() => {
    const el = box.current;
    if (!el.open) el.showModal();
    return () => el.open && el.close();
  }, []);
  // A click on the backdrop (the dialog element itself, outside its content) closes it too.
  const onClick = (e) => e.target === box.current && onClose();
  return html`<dialog class=${`dialog ${extra}`} ref=${box} aria-labelledby=${id} onClose=${onClose} onClick=${onClick}>
    <div class="dialog-inner">
      <div class="dialog-head">
        <h2 id=${id}>${title}</h2>
        <button type="button" class="icon-button" aria-label="Close" onClick=${onClose}><${Icon} name="x" /></button>
      </div>
      ${children}
    </div>
  </dialog>`;
}
