// IP geolocation against the real DB-IP databases: countries, subdivisions, cities, and addresses that locate nothing.
// Expected places are what the installed database records (checked with a direct maxmind lookup).

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { GeoLookup, unmapIpv4 } from '../../../src/ingest/enrich/geo.js';

const nowhere = { countryCode: '', region: '', state: '', city: '' };

describe('GeoLookup', () => {
  let geo: GeoLookup;
  before(async () => {
    geo = await GeoLookup.open();
  });

  const cases: Array<[string, typeof nowhere]> = [
    ['8.8.8.8', { countryCode: 'US', region: 'California', state: 'California', city: 'Mountain View' }],
    ['81.2.69.142', { countryCode: 'GB', region: 'England', state: 'England', city: 'London' }],
    ['1.1.1.1', { countryCode: 'AU', region: 'New South Wales', state: 'New South Wales', city: 'Sydney' }],
    // DB-IP records "Amsterdam (Amsterdam-Centrum)": the district is dropped.
    ['193.0.6.139', { countryCode: 'NL', region: 'North Holland', state: 'North Holland', city: 'Amsterdam' }],
    ['2001:67c:2e8:22::c100:68b', { countryCode: 'NL', region: 'North Holland', state: 'North Holland', city: 'Amsterdam' }],
    ['2a01:4f8::1', { countryCode: 'DE', region: 'Bavaria', state: 'Bavaria', city: 'Nuremberg' }],
    ['::ffff:8.8.8.8', { countryCode: 'US', region: 'California', state: 'California', city: 'Mountain View' }],
    ['::FFFF:808:808', { countryCode: 'US', region: 'California', state: 'California', city: 'Mountain View' }],
  ];
  for (const [ip, expected] of cases) {
    it(`locates ${ip}`, () => assert.deepEqual(geo.lookup(ip), expected));
  }

  it('locates Google DNS over IPv6 where the database puts it', () => {
    assert.equal(geo.lookup('2001:4860:4860::8888').countryCode, 'CA');
  });

  it('locates nothing for private, loopback, reserved and invalid addresses', () => {
    for (const ip of [
      '127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '100.64.0.1', '169.254.1.1', '203.0.113.9', '0.0.0.0',
      '255.255.255.255', '::1', '::', 'fe80::1', 'fe80::1%eth0', 'fd00::1', '2001:db8::1', '::ffff:10.0.0.1',
      'garbage', '', ' 8.8.8.8', '8.8.8', '999.1.1.1', '8.8.8.8:443',
    ]) {
      assert.deepEqual(geo.lookup(ip), nowhere, ip);
    }
  });

  it('shares one instance per process', async () => {
    assert.equal(await GeoLookup.open(), geo);
  });
});

describe('unmapIpv4', () => {
  it('unwraps IPv4-mapped IPv6 addresses only', () => {
    assert.equal(unmapIpv4('::ffff:1.2.3.4'), '1.2.3.4');
    assert.equal(unmapIpv4('::ffff:0102:0304'), '1.2.3.4');
    assert.equal(unmapIpv4('::ffff:c000:0280'), '192.0.2.128');
    assert.equal(unmapIpv4('2001:db8::1'), '2001:db8::1');
    assert.equal(unmapIpv4('1.2.3.4'), '1.2.3.4');
  });
});
