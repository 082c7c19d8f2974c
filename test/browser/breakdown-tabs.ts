// Choosing a tab of the report's breakdown cards as a user does: its tab when the row shows it, otherwise from the
// row's "More" menu (components/tabs.js collapses the tabs that do not fit), shared by the browser tests.

import type { Page } from 'playwright-core';

/** Opens the tab named `name` (exactly): clicks it in its row, or picks it from the "More" menu it collapsed into. */
export async function chooseTab(page: Page, name: string): Promise<void> {
  const tab = page.getByRole('tab', { name, exact: true });
  const more = page.locator('[data-menu="more-tabs"]').filter({ has: page.locator('[role="menuitemradio"]', { hasText: name }) });
  const item = more.getByRole('menuitemradio', { name, exact: true, includeHidden: true });
  await tab.or(item).first().waitFor({ state: 'attached' });
  if (await tab.count()) return tab.click();
  await more.locator('button.menu-button').click();
  await more.getByRole('menuitemradio', { name, exact: true }).click();
}
