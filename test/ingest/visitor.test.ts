// The visitor hash: 64 bits of SHA-256 over the NUL-separated fields, the same whichever way the bytes are fed
// (hits of one day hashed before and after an upgrade must stay one visitor), and each field kept apart.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { visitorHash } from '../../src/ingest/visitor.js';

/** The hash as it was first written: the fields fed to SHA-256 one after another. */
function fedInTurn(...fields: string[]): bigint {
  const h = createHash('sha256');
  fields.forEach((f, i) => (i === 0 ? h.update(f) : h.update('\0').update(f)));
  return h.digest().readBigUInt64BE(0);
}

describe('visitorHash', () => {
  const ua = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
  it('is the first 64 bits of SHA-256 over salt, site, address, agent (and host), NUL-separated', () => {
    assert.equal(visitorHash('salt', 'SITE', '203.0.113.9', ua), fedInTurn('salt', 'SITE', '203.0.113.9', ua));
    assert.equal(visitorHash('salt', 'SITE', '2001:db8::1', 'Agent ü 日本', 'https://a.test'), fedInTurn('salt', 'SITE', '2001:db8::1', 'Agent ü 日本', 'https://a.test'));
    assert.equal(visitorHash('s', 'S', '', ''), fedInTurn('s', 'S', '', ''));
  });

  it('keeps fields apart and counts domains apart only when given', () => {
    assert.notEqual(visitorHash('s', 'S', '1.2.3.4', '5x'), visitorHash('s', 'S', '1.2.3.45', 'x'));
    assert.notEqual(visitorHash('s', 'S', '1.2.3.4', ua), visitorHash('s', 'S', '1.2.3.4', ua, 'https://a.test'));
    assert.notEqual(visitorHash('s', 'S', '1.2.3.4', ua, 'https://a.test'), visitorHash('s', 'S', '1.2.3.4', ua, 'https://b.test'));
    assert.notEqual(visitorHash('s1', 'S', '1.2.3.4', ua), visitorHash('s2', 'S', '1.2.3.4', ua));
  });

  it('reads the 64 bits unsigned and whole, whatever the leading digits (high bit set, leading zeros)', () => {
    const ids = Array.from({ length: 300 }, (_, i) => {
      const id = visitorHash('salt', 'SITE', `198.51.100.${i}`, ua);
      assert.equal(id, fedInTurn('salt', 'SITE', `198.51.100.${i}`, ua));
      return id;
    });
    assert.ok(ids.some((id) => id >= 2n ** 63n), 'some ids have the high bit set');
    assert.ok(ids.some((id) => id < 2n ** 60n), 'some ids start with a zero hex digit');
    assert.ok(ids.every((id) => id >= 0n && id < 2n ** 64n));
  });
});
