// Which tabs a row shows (src/web/components/tabs.js): all when they fit; otherwise those from the start that fit
// beside the "More" button, the chosen tab always among them in its place.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rootFileUrl } from '../helpers/root.js';

type TabsShown = (widths: readonly number[], room: number, selected: number) => number[];
// A dashboard module (plain JavaScript for the browser): imported by URL, as the type checker has no declarations for it.
const { tabsShown } = (await import(rootFileUrl('src/web/components/tabs.js'))) as { tabsShown: TabsShown };

// Seven tabs of 100 px; the "More" button is kept 96 px.
const SEVEN = [100, 100, 100, 100, 100, 100, 100];

describe('tabs that collapse into "More"', () => {
  it('shows every tab when all fit, whichever is chosen', () => {
    assert.deepEqual(tabsShown(SEVEN, 700, 6), [0, 1, 2, 3, 4, 5, 6]);
  });

  it('shows those from the start that fit beside "More" when the chosen one is among them', () => {
    assert.deepEqual(tabsShown(SEVEN, 500, 0), [0, 1, 2, 3]);
    assert.deepEqual(tabsShown(SEVEN, 500, 3), [0, 1, 2, 3]);
  });

  it('puts a chosen tab from the menu in place of the last that fit, keeping the order', () => {
    assert.deepEqual(tabsShown(SEVEN, 500, 6), [0, 1, 2, 6]);
    assert.deepEqual(tabsShown([80, 80, 80, 80, 80, 80, 200], 500, 6), [0, 1, 6]);
  });

  it('shows at least one tab, the chosen one, in the narrowest row', () => {
    assert.deepEqual(tabsShown(SEVEN, 50, 4), [4]);
    assert.deepEqual(tabsShown(SEVEN, 50, -1), [0]);
  });
});
