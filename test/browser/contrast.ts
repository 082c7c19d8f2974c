// Text contrast as a viewer meets it: for each kind of text on the page, its colour against the first opaque
// background behind it (WCAG 2 relative luminance), listing what falls under a ratio.

import type { Page } from 'playwright-core';

// The function given to page.evaluate runs in Chromium; this project compiles without the DOM library.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
declare const getComputedStyle: (el: any) => any;

/**
 * The shown text elements of `read` (pairs of what they are and a CSS selector) under `min`:1, up to six of each
 * kind checked, in words ("nav link "Imports": 3.20"); a kind with nothing shown is listed as not on the page.
 */
export function lowContrast(page: Page, read: readonly (readonly [string, string])[], min = 4.5): Promise<string[]> {
  // Sent as text with the __name helper that tsx's keepNames compilation calls and the page lacks.
  return page.evaluate(`((__name) => (${String(measure)})(${JSON.stringify(read)}, ${min}))((f) => f)`) as Promise<string[]>;
}

function measure(read: [string, string][], min: number): string[] {
  const channel = (c: number) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  const rgba = (text: string): number[] => (text.match(/[\d.]+/g) ?? []).map(Number);
  const luminance = ([r, g, b]: number[]) => 0.2126 * channel(r!) + 0.7152 * channel(g!) + 0.0722 * channel(b!);
  const behind = (el: any): number[] => {
    for (; el; el = el.parentElement) {
      const c = rgba(getComputedStyle(el).backgroundColor);
      if ((c[3] ?? 1) > 0.5) return c;
    }
    return rgba(getComputedStyle(document.documentElement).backgroundColor);
  };
  const out: string[] = [];
  for (const [what, selector] of read) {
    const els: any[] = [...document.querySelectorAll(selector)].filter((e: any) => e.offsetParent !== null && e.textContent.trim());
    if (!els.length) out.push(`${what}: not on the page`);
    for (const el of els.slice(0, 6)) {
      const [a, b] = [luminance(rgba(getComputedStyle(el).color)), luminance(behind(el))];
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      if (ratio < min) out.push(`${what} "${el.textContent.trim().slice(0, 30)}": ${ratio.toFixed(2)}`);
    }
  }
  return out;
}
