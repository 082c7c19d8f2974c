// Real headless Chromium for browser tests (playwright-core driving the system Chromium).
//
//   const browser = await launchBrowser();
//   const page = await openPage(browser, { initScript: 'Object.defineProperty(...)' });
//   ...
//   await page.context().close();   // or closePage(page)
//   await browser.close();
//
// Tests that need a browser should skip when `browserSkipReason()` returns a reason (no Chromium here).

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.PLUMB_CHROMIUM_PATH ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

/** Why browser tests cannot run on this machine, or undefined when they can. */
export function browserSkipReason(): string | undefined {
  return existsSync(CHROMIUM_PATH) ? undefined : `no Chromium at ${CHROMIUM_PATH} (set PLUMB_CHROMIUM_PATH)`;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 30_000 });
}

export interface OpenPageOptions extends BrowserContextOptions {
  /** JavaScript run in every frame before the page's own scripts (e.g. to fake navigator.doNotTrack). */
  initScript?: string;
}

/**
 * A page in a fresh browser context (its own storage and cookies). Close it with `closePage`.
 * Dialogs (alert/confirm) are dismissed; uncaught page errors are collected in `errors`.
 */
export async function openPage(browser: Browser, options: OpenPageOptions = {}): Promise<Page & { errors: string[] }> {
  const { initScript, ...contextOptions } = options;
  const context = await browser.newContext(contextOptions);
  if (initScript !== undefined) await context.addInitScript(initScript);
  const page = (await context.newPage()) as Page & { errors: string[] };
  page.errors = [];
  page.on('pageerror', (err) => page.errors.push(String(err)));
  page.on('dialog', (dialog) => void dialog.dismiss().catch(() => {}));
  // Playwright's own default: a page that renders in a second alone can take ten on a machine running other test
  // files beside it (CI runs two at once on two cores), and a wait returns as soon as its element is there.
  page.setDefaultTimeout(30_000);
  return page;
}

/** Logs `page` (whose context has the server as its baseURL `base`) in through the login form, to the sites list. */
export async function logInThroughForm(page: Page, base: string, email: string, password: string): Promise<void> {
  await page.goto('/login');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(`${base}/sites`);
}

export async function closePage(page: Page): Promise<void> {
  await page.context().close();
}

/**
 * The User-Agent of a desktop Chrome of this browser's version. Headless Chromium says `HeadlessChrome`, which
 * Plumb's collector (rightly) drops as a bot: tests of stored hits browse with this instead.
 */
export function desktopChromeUserAgent(browser: Browser): string {
  return `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${browser.version()} Safari/537.36`;
}

/** How many pixels the page is wider than its window (0 or less: nothing scrolls sideways). */
export function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });
}

/**
 * Waits until `read()` gives `expected` (deep-equal; a page loads asynchronously, and a read that throws meanwhile
 * counts as not yet), then asserts it, naming `what` when it never came within `timeoutMs`.
 */
export async function eventuallyEqual<T>(read: () => Promise<T>, expected: T, what: string, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await read().catch(() => undefined);
    try {
      assert.deepEqual(last, expected);
      return;
    } catch {
      if (Date.now() > end) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  assert.deepEqual(last, expected, what);
}
