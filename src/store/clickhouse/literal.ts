// The one way a value enters ClickHouse SQL text: as an escaped literal. ClickHouse 18.16 has no query
// parameters, so report values, the store's own queries and its inserts (VALUES) all go through sqlLiteral().

import type { QueryParam } from '../types.js';

// Inside '...' ClickHouse reads backslash escapes; only `\` and `'` must be escaped, the rest are escaped so that
// SQL stays on one line in logs and a NUL never reaches a C string anywhere on the way.
const STRING_ESCAPES: Record<string, string> = { '\\': '\\\\', "'": "\\'", '\0': '\\0', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

const NEEDS_ESCAPE = /[\\'\0\n\r\t]/;
const ESCAPED = /[\\'\0\n\r\t]/g;

/** A JavaScript string as a ClickHouse string literal (sent as UTF-8; lone surrogates become U+FFFD on the way). */
export function stringLiteral(s: string): string {
  // Most strings need no escape: testing first spares the replace's callback machinery (the collector builds
  // about 45 literals a hit).
  if (!NEEDS_ESCAPE.test(s)) return `'${s}'`;
  return `'${s.replace(ESCAPED, (c) => STRING_ESCAPES[c]!)}'`;
}

/**
 * A value as a ClickHouse literal. Timestamps are stored as Int64 milliseconds since the epoch (18.16 has no
 * DateTime64), so a Date becomes that integer. Non-finite numbers and invalid dates are refused.
 */
export function sqlLiteral(value: QueryParam): string {
  if (value === null) return 'NULL';
  switch (typeof value) {
    case 'string':
      return stringLiteral(value);
    case 'boolean':
      return value ? '1' : '0';
    case 'bigint':
      return value.toString();
    case 'number':
      if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
      // Parenthesised so that a negative literal can follow any operator (`x - -1` would read as `x - - 1` anyway).
      return value < 0 ? `(${value})` : String(value);
    default: {
      const ms = value.getTime();
      if (!Number.isFinite(ms)) throw new RangeError('not a valid date');
      return ms < 0 ? `(${ms})` : String(ms);
    }
  }
}

/** An identifier (a database name from configuration): letters, digits and underscores only, so no quoting. */
export function identifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new RangeError(`not a valid ClickHouse name: ${JSON.stringify(name)}`);
  return name;
}
