// A QR code of a text as an <img> (an SVG data address, generated in the page by the qrcode package), for
// authenticator apps to scan instead of having the key typed in.

import QRCode from 'qrcode';
import { html, useEffect, useState } from './ui.js';

/** The SVG data address of `text`'s QR code (test/browser/people.test.ts makes the same from the link's address). */
async function qrDataUrl(text) {
  const svg = await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}

export function QrCode({ text, label }) {
  const [src, setSrc] = useState('');
  useEffect(() => {
    let live = true;
    qrDataUrl(text).then((url) => live && setSrc(url));
    return () => {
      live = false;
    };
  }, [text]);
  return src ? html`<img class="qr-code" src=${src} alt=${label} width="200" height="200" />` : null;
}
