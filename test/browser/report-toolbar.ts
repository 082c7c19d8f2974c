// Driving the report's toolbar as a user does (the date-range picker, the "Compare with" menu, the live count, and
// the chart's "Per" menu),
// shared by the browser tests that change the range or the comparison.

import type { Locator, Page } from 'playwright-core';

/** Opens the date-range picker and picks a named range (`7d`, `last-month`, ...). */
export async function chooseRange(page: Page, range: string): Promise<void> {
  await page.locator('.date-range-button').click();
  await page.locator(`[data-range-option="${range}"]`).click();
}

/** Types a custom range (ISO dates) into the picker and applies it. */
export async function chooseCustomRange(page: Page, { from, to }: { from: string; to: string }): Promise<void> {
  await page.locator('.date-range-button').click();
  const panel = page.getByRole('dialog', { name: 'Choose the date range' });
  await panel.getByLabel('From', { exact: true }).fill(from);
  await panel.getByLabel('To', { exact: true }).fill(to);
  await panel.getByRole('button', { name: 'Apply', exact: true }).click();
}

/** Picks what to compare with (`previous`, `year`, `off`) from its menu. */
export async function chooseComparison(page: Page, compare: string): Promise<void> {
  await page.locator('[data-menu="compare"] .menu-button').click();
  await page.locator(`[data-menu="compare"] [data-option="${compare}"]`).click();
}

/** Picks the chart's granularity (`auto`, `hour`, `day`, `week`, `month`) from its "Per" menu. */
export async function chooseInterval(page: Page, interval: string): Promise<void> {
  await page.locator('[data-menu="interval"] .menu-button').click();
  await page.locator(`[data-menu="interval"] [data-option="${interval}"]`).click();
}

/** The chart's granularity the "Per" menu shows as chosen. */
export const shownInterval = (page: Page): Promise<string | null> =>
  page.locator('[data-menu="interval"] [role="menuitemradio"][aria-checked="true"]').getAttribute('data-option');

/** The range the picker shows as chosen. */
export const shownRange = (page: Page): Promise<string | null> => page.locator('.date-range').getAttribute('data-range');

/** The comparison the menu shows as chosen. */
export const shownComparison = (page: Page): Promise<string | null> =>
  page.locator('[data-menu="compare"] [role="menuitemradio"][aria-checked="true"]').getAttribute('data-option');

/** Opens the realtime view from the toolbar's live count; the dialog's locator. */
export async function openRealtime(page: Page): Promise<Locator> {
  await page.locator('[data-live]').click();
  const view = page.getByRole('dialog', { name: 'Right now' });
  await view.waitFor();
  return view;
}
