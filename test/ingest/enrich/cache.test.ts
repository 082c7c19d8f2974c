// The bounded LRU map behind the user-agent caches.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundedCache } from '../../../src/ingest/enrich/cache.js';

describe('BoundedCache', () => {
  it('evicts the least recently used entry when full', () => {
    const cache = new BoundedCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.get('a'), 1); // `b` is now the oldest
    cache.set('c', 3);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('b'), undefined);
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.get('c'), 3);
  });

  it('replaces an existing key without evicting another', () => {
    const cache = new BoundedCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 10);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('a'), 10);
    assert.equal(cache.get('b'), 2);
  });
});
