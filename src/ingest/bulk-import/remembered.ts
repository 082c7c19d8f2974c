// The import's per-value caches (the import thread's and its reader's): a value worked out once per distinct key,
// the cache starting afresh once it holds CACHE_ENTRIES keys, so an import's memory stays bounded.

/** Entries a per-value cache holds before it starts afresh (each entry is a few hundred bytes). */
export const CACHE_ENTRIES = 200_000;

/**
 * A value worked out once per distinct key (up to CACHE_ENTRIES keys at a time). `work` is given the key, so that a
 * caller can pass a function made once rather than a closure made at every call (the import asks a million times).
 */
export function remembered<V>(map: Map<string, V>, key: string, work: (key: string) => V): V {
  let value = map.get(key);
  if (value === undefined) {
    if (map.size >= CACHE_ENTRIES) map.clear();
    map.set(key, (value = work(key)));
  }
  return value;
}
