// When an import line says it happened, for `plumb import`'s sort: read from the line's text, and for the common
// line (a flat object with one plain "YYYY-MM-DD HH:MM:SS" timestamp) straight from its file block's bytes, so that
// indexing a million lines makes no string a line.

import { timestampMsAt } from '../domain/time.js';

const TIMESTAMP_KEY = '"timestamp":"';
const FLAT_TIMESTAMP = /"timestamp":"([^"\\]*)"/;

/** When a line says it happened (-Infinity when it does not say so readably). */
export function timestampOf(line: string): number {
  // Most lines are flat objects with one plain timestamp: read it without parsing the whole line (parsing was a
  // second or more of a million-line import). Anything else (nested objects, escapes, spacing) is parsed.
  const at = line.indexOf(TIMESTAMP_KEY);
  const flat = at !== -1 && line.indexOf(TIMESTAMP_KEY, at + 1) === -1 && line.indexOf('{', 1) === -1 ? FLAT_TIMESTAMP.exec(line) : null;
  let t: unknown;
  if (flat) t = flat[1];
  else {
    try {
      t = (JSON.parse(line) as { timestamp?: unknown }).timestamp;
    } catch {
      return -Infinity; // the server reports the line; sending it first keeps its report early
    }
  }
  const ms = typeof t === 'string' ? Date.parse(t.includes('T') ? t : `${t.replace(' ', 'T')}Z`) : NaN;
  return Number.isNaN(ms) ? -Infinity : ms;
}

const OPEN_BRACE = 0x7b;
const QUOTE = 0x22;
const ZERO = 0x30;

/**
 * TIMESTAMP_KEY's last five characters, then its first eight. A search for the short tail, which JSON text seldom
 * holds elsewhere, took V8 under half as long as one for the whole key (a million lines: 100 ms against 220).
 */
const KEY_TAIL = 'mp":"';
const KEY_HEAD = TIMESTAMP_KEY.slice(0, -KEY_TAIL.length);

/** Where the first TIMESTAMP_KEY at or after `from` in `block` starts, or -1. */
function keyAt(block: string, from: number): number {
  for (let tail = block.indexOf(KEY_TAIL, from + KEY_HEAD.length); tail !== -1; tail = block.indexOf(KEY_TAIL, tail + 1)) {
    if (block.startsWith(KEY_HEAD, tail - KEY_HEAD.length)) return tail - KEY_HEAD.length;
  }
  return -1;
}

/** Reads the times of a block's lines (flatTimestampsIn), a line at a time, in file order. */
export type LineTimes = (start: number, end: number) => number | undefined;

/**
 * timestampOf of each line at [start, end) of `block`, a file block decoded as latin1 (one character a byte, so
 * offsets are the file's and the ASCII that JSON's structure is made of reads as itself), when the line is a flat
 * object (no `{` after its first character) with one `"timestamp":"` and a valid "YYYY-MM-DD HH:MM:SS" after it;
 * undefined for any other line, which the caller reads with timestampOf from its text. For the lines it answers
 * it gives exactly what timestampOf gives (a test compares the two on lines made to differ). Lines are asked for in
 * file order: the search that proves a line has one key finds the next line's, and is kept for it (a second search
 * a line, backwards, was a fifth of indexing a file).
 */
export function flatTimestampsIn(block: string): LineTimes {
  // The first key at or after `searchedFrom` (-1: none in the rest of the block).
  let searchedFrom = Infinity;
  let next = -1;
  return (start, end) => {
    if (block.charCodeAt(start) !== OPEN_BRACE) return undefined;
    const brace = block.indexOf('{', start + 1);
    if (brace !== -1 && brace < end) return undefined;
    if (start < searchedFrom || (next !== -1 && next < start)) next = keyAt(block, start);
    searchedFrom = start;
    const key = next;
    if (key === -1 || key >= end) return undefined;
    // The key after this one (from the next character: a key may start on this one's closing quote); inside the
    // line it is a second key, which JSON.parse would read instead.
    next = keyAt(block, key + 1);
    searchedFrom = key + 1;
    if (next !== -1 && next < end) return undefined;
    const p = key + TIMESTAMP_KEY.length;
    // 19 characters, then the closing quote, inside the line; years from 1000 on (earlier ones are read from the text).
    if (p + 20 > end || block.charCodeAt(p + 19) !== QUOTE || block.charCodeAt(p) === ZERO) return undefined;
    // Only real calendar times, which Date.parse reads as they are (no 24:00, no leap second, no 30 February).
    return timestampMsAt(block, p);
  };
}
