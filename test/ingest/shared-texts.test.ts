// SharedTexts (equal texts as one string). What it is for, visits in progress holding less memory, is measured with
// CompactVisitTracker (test/ingest/live/compact-visits.test.ts).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SharedTexts } from '../../src/ingest/shared-texts.js';

describe('SharedTexts', () => {
  it('answers each text with an equal one and holds one string for equal texts', () => {
    const texts = new SharedTexts();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 50; i++) assert.equal(texts.of(`/page-${i}`), `/page-${i}`);
    }
    assert.equal(texts.size, 50);
  });

  it('holds at most its maximum, starting again when full, and never long texts', () => {
    const texts = new SharedTexts(100);
    for (let i = 0; i < 1_000; i++) {
      texts.of(`/unique-${i}`);
      assert.ok(texts.size <= 100);
    }
    const long = `/${'x'.repeat(200)}`;
    const before = texts.size;
    assert.equal(texts.of(long), long);
    assert.equal(texts.size, before);
  });
});
