// Custom properties read from senders' JSON: one rule for every format, bounded whatever the input.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { boundProps, MAX_PROPS, readProps } from '../../src/domain/props.js';

describe('readProps', () => {
  it('keeps text, writes numbers and booleans as JavaScript does, drops the rest', () => {
    assert.deepEqual(
      readProps({ plan: 'pro', n: 12, f: 1.5, neg: -3, yes: true, no: false, nul: null, arr: [1], obj: { a: 1 }, inf: 1e400, blank: '  ', '': 'x' }),
      [['plan', 'pro'], ['n', '12'], ['f', '1.5'], ['neg', '-3'], ['yes', 'true'], ['no', 'false']],
    );
  });

  it('reads a JSON text of an object (Plausible lets `p` be one), and nothing from other JSON or broken text', () => {
    assert.deepEqual(readProps('{"a":"1","b":2}'), [['a', '1'], ['b', '2']]);
    for (const bad of ['[1,2]', '"a"', '{', 'null', '', 42, null, undefined, ['a', 'b']]) assert.deepEqual(readProps(bad), []);
  });

  it('keeps the first 30 usable properties and drops one whose key or value is over 300 or 2000 UTF-8 bytes', () => {
    const o: Record<string, string> = { ['k'.repeat(301)]: 'v', big: 'v'.repeat(2001), wide: 'é'.repeat(1001), edge: 'é'.repeat(1000) };
    for (let i = 0; i < 40; i++) o[`p${i}`] = String(i);
    const props = readProps(o);
    assert.equal(props.length, MAX_PROPS);
    assert.deepEqual(props[0], ['edge', 'é'.repeat(1000)]);
    assert.deepEqual(props.at(-1), ['p28', '28']);
    assert.deepEqual(readProps({ ['k'.repeat(300)]: 'v'.repeat(2000) }), [['k'.repeat(300), 'v'.repeat(2000)]]);
  });

  it('treats prototype names as plain keys and touches no prototype', () => {
    const parsed = JSON.parse('{"__proto__":{"polluted":"yes"},"constructor":"c","toString":"t","hasOwnProperty":"h"}');
    assert.deepEqual(readProps(parsed), [['constructor', 'c'], ['toString', 't'], ['hasOwnProperty', 'h']], 'an object value is dropped');
    assert.deepEqual(readProps('{"__proto__":"p"}'), [['__proto__', 'p']]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    // Inherited properties are not the sender's.
    assert.deepEqual(readProps(Object.create({ inherited: 'x' })), []);
  });

  it('skips the keys it is told to (Fathom\'s _value), replaces lone surrogates, and keeps SQL and regex text as it is', () => {
    assert.deepEqual(readProps({ _value: 100, a: 'b' }, { skip: new Set(['_value']) }), [['a', 'b']]);
    assert.deepEqual(readProps({ 'k\uD800': 'v\uDC00x' }), [['k\uFFFD', 'v\uFFFDx']]);
    const hostile = { "'); DROP TABLE hits; --": '.*+?()[]{}|^$\\', 'ü 😀': '\u0000\n' };
    assert.deepEqual(readProps(hostile), Object.entries(hostile));
  });

  it("flattens nested objects to dotted keys and arrays to JSON text with Umami's rule, three levels deep at most", () => {
    const data = { plan: { name: 'pro', seats: 5, deep: { deeper: { deepest: 'x' }, ok: 'y' } }, tags: ['a', 1], none: null };
    assert.deepEqual(readProps(data, { flatten: true }), [['plan.name', 'pro'], ['plan.seats', '5'], ['plan.deep.ok', 'y'], ['tags', '["a",1]']]);
    assert.deepEqual(readProps(data), [], "Plausible's rule drops nested values");
  });

  it('reads at most a bounded number of entries, however many are sent', () => {
    const o: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) o[`k${i}`] = null;
    o.last = 'x';
    assert.deepEqual(readProps(o), [], 'entries past the first thousand are not looked at');
  });
});

describe('boundProps', () => {
  it('applies the same limits to pairs, ignoring anything that is not a pair of strings, and duplicate keys', () => {
    assert.deepEqual(boundProps([['a', '1'], ['a', '2'], ['b'], [1, 2], 'x', ['c', 'x'.repeat(2001)], ['d', '4']]), [['a', '1'], ['d', '4']]);
    assert.deepEqual(boundProps(undefined), []);
    assert.deepEqual(boundProps({ a: 'b' }), []);
    assert.equal(boundProps(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v'])).length, MAX_PROPS);
  });
});
