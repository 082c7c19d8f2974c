// Custom properties of a hit (Plausible's props, Umami's event data, Fathom payload keys): read from any sender's
// JSON into a bounded list of text pairs, by one rule for every path (docs/collection.md, "Custom properties").

/** A hit's custom properties: (key, value) pairs in the order sent, keys unique. */
export type PropList = readonly (readonly [key: string, value: string])[];

/** At most this many properties per hit (Plausible's limit); later ones are dropped. */
export const MAX_PROPS = 30;
/** Longest key and value in UTF-8 bytes (Plausible's limits); a longer one drops its property. */
export const MAX_PROP_KEY_BYTES = 300;
export const MAX_PROP_VALUE_BYTES = 2000;
/**
 * Entries looked at per object before giving up: an object with thousands of empty or oversize entries costs no
 * more than this to read.
 */
const MAX_ENTRIES_READ = 1000;

const utf8Length = (s: string) => Buffer.byteLength(s, 'utf8');
/** Lone surrogates as U+FFFD, as every store would write them anyway (Node 20 has the method; ES2023's types do not). */
const wellFormed = (s: string): string => (s as string & { toWellFormed(): string }).toWellFormed();

/**
 * A value as stored text: strings as they are, finite numbers and booleans as JavaScript writes them (`1.5`,
 * `true`), anything else (null, objects, arrays, non-finite numbers) undefined: its property is dropped.
 */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === 'boolean') return String(value);
  return undefined;
}

/** Whether a pair is kept: non-blank key and value (after leading white space, as Plausible), within the limits. */
function usable(key: string, value: string): boolean {
  if (key.trimStart() === '' || value.trimStart() === '') return false;
  // UTF-8 never takes fewer bytes than UTF-16 code units: a long string is refused before it is measured.
  if (key.length > MAX_PROP_KEY_BYTES || value.length > MAX_PROP_VALUE_BYTES) return false;
  return utf8Length(key) <= MAX_PROP_KEY_BYTES && utf8Length(value) <= MAX_PROP_VALUE_BYTES;
}

export interface ReadPropsOptions {
  /** Keys that mean something else to the sender (Fathom's `_value`, Umami's `revenue`): never properties. */
  skip?: ReadonlySet<string>;
  /**
   * Umami's rule for nested values: an object's entries become `parent.child` keys (up to 3 levels deep) and an
   * array becomes its JSON text. Without it (Plausible's and Fathom's rule) nested values are dropped.
   */
  flatten?: boolean;
}

const MAX_DEPTH = 3;

/** Keys of Umami's event data that its revenue reports read: the hit's value, never properties. */
export const UMAMI_REVENUE_KEYS: ReadonlySet<string> = new Set(['revenue', 'currency']);

/**
 * Custom properties from a parsed JSON object (or a JSON text of one, as Plausible's `p` may be), keeping only
 * own entries: the first MAX_PROPS usable pairs in order. Never throws: unusable input gives an empty list.
 */
export function readProps(input: unknown, options: ReadPropsOptions = {}): PropList {
  let source = input;
  if (typeof source === 'string') {
    if (source.length > MAX_PROPS * (MAX_PROP_KEY_BYTES + MAX_PROP_VALUE_BYTES) * 2) return [];
    try {
      source = JSON.parse(source);
    } catch {
      return [];
    }
  }
  if (!isObject(source)) return [];
  const skip = options.skip ?? NO_KEYS;
  const out: [string, string][] = [];
  const seen = new Set<string>();
  let read = 0;
  const walk = (o: object, prefix: string, depth: number): void => {
    // Object.keys gives own enumerable keys only (for-in would walk the prototype chain), and JSON.parse makes a
    // `__proto__` key an own property like any other, so it is kept as a plain key.
    for (const rawKey of Object.keys(o)) {
      if (++read > MAX_ENTRIES_READ || out.length >= MAX_PROPS) return;
      if (depth === 0 && skip.has(rawKey)) continue;
      const raw = (o as Record<string, unknown>)[rawKey];
      const key = prefix + rawKey;
      if (options.flatten && isObject(raw)) {
        if (depth + 1 < MAX_DEPTH && key.length < MAX_PROP_KEY_BYTES) walk(raw, `${key}.`, depth + 1);
        continue;
      }
      const value = options.flatten && Array.isArray(raw) ? arrayText(raw) : textOf(raw);
      if (value === undefined) continue;
      const k = wellFormed(key);
      const v = wellFormed(value);
      if (!usable(k, v) || seen.has(k)) continue;
      seen.add(k);
      out.push([k, v]);
    }
  };
  walk(source, '', 0);
  return out;
}

const isObject = (v: unknown): v is object => !!v && typeof v === 'object' && !Array.isArray(v);

/** An array's JSON text, unless it is too long to be a value (measured without writing out a huge one). */
function arrayText(a: unknown[]): string | undefined {
  if (a.length > MAX_PROP_VALUE_BYTES / 2) return undefined;
  try {
    return JSON.stringify(a);
  } catch {
    return undefined;
  }
}

const NO_KEYS: ReadonlySet<string> = new Set();

/**
 * The same rule applied to a list that is already pairs (a hit from another module, an import line, the hit log):
 * every path into the store goes through it, so no caller can store more than the limits allow.
 */
export function boundProps(props: unknown): PropList {
  if (!Array.isArray(props) || props.length === 0) return [];
  const out: [string, string][] = [];
  const seen = new Set<string>();
  const n = Math.min(props.length, MAX_ENTRIES_READ);
  for (let i = 0; i < n && out.length < MAX_PROPS; i++) {
    const pair: unknown = props[i];
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') continue;
    const key = wellFormed(pair[0]);
    const value = wellFormed(pair[1]);
    if (!usable(key, value) || seen.has(key)) continue;
    seen.add(key);
    out.push([key, value]);
  }
  return out;
}

/** Pairs as two parallel arrays, the stores' column layout (prop_keys, prop_values). */
export function propColumns(props: PropList | undefined): [keys: string[], values: string[]] {
  const keys: string[] = [];
  const values: string[] = [];
  for (const [k, v] of props ?? []) {
    keys.push(k);
    values.push(v);
  }
  return [keys, values];
}

/** Parallel arrays read back from a row into pairs (rows written before custom properties have none). */
export function propsFromColumns(keys: unknown, values: unknown): PropList {
  if (!Array.isArray(keys) || !Array.isArray(values)) return [];
  const n = Math.min(keys.length, values.length);
  const out: [string, string][] = [];
  for (let i = 0; i < n; i++) out.push([String(keys[i]), String(values[i])]);
  return out;
}
