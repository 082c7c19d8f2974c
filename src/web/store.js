// A small observable store: one state object, replaced (never mutated) on every change, and a hook that
// re-renders the components reading it. The report keeps its range, filters and comparison in one (report/state.js).

import { useEffect, useState } from './ui.js';

export function createStore(initial) {
  let state = initial;
  const listeners = new Set();
  return {
    get: () => state,
    /** `set({ key: value })` merges; `set((old) => next)` replaces. */
    set(change) {
      const next = typeof change === 'function' ? change(state) : { ...state, ...change };
      if (next === state) return;
      state = next;
      for (const listener of [...listeners]) listener(state);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** The store's current state; the component re-renders whenever it changes. */
export function useStore(store) {
  const [value, setValue] = useState(store.get());
  useEffect(() => {
    setValue(store.get());
    return store.subscribe(setValue);
  }, [store]);
  return value;
}
