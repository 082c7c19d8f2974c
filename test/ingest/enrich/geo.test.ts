// IP geolocation against the real DB-IP databases: countries, subdivisions, cities, and addresses that locate nothing.
// Expected places are what the installed database records (checked with a direct maxmind lookup).

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { getEnvironmentData, Worker, type WorkerOptions } from 'node:worker_threads';
import { GeoLookup, unmapIpv4 } from '../../../src/ingest/enrich/geo.js';
import { COMPILED, sourceModuleUrl } from '../../helpers/root.js';

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

  it('tells each unroutable IPv4 network from the addresses just outside it', () => {
    // The last address inside each network, and one just outside it that the database locates.
    const edges: Array<[inside: string, outside: string]> = [
      ['10.255.255.255', '11.0.0.1'], ['100.127.255.255', '100.128.0.1'], ['100.64.0.0', '100.63.255.255'],
      ['127.255.255.255', '126.255.255.254'], ['169.254.255.255', '169.255.0.1'], ['172.31.255.255', '172.32.0.1'],
      ['172.16.0.0', '172.15.255.255'], ['192.0.0.255', '192.0.1.1'], ['192.0.2.255', '192.0.3.1'],
      ['192.168.255.255', '192.169.0.1'], ['192.168.0.0', '192.167.255.255'], ['198.19.255.255', '198.20.0.1'],
      ['198.18.0.0', '198.17.255.255'], ['198.51.100.255', '198.51.101.1'], ['198.51.100.0', '198.51.99.1'],
      ['203.0.113.255', '203.0.114.1'], ['203.0.113.0', '203.0.112.1'], ['0.255.255.255', '9.255.255.255'],
      ['224.0.0.0', '223.255.255.1'], ['239.255.255.255', '128.0.0.1'],
    ];
    for (const [inside, outside] of edges) {
      assert.deepEqual(geo.lookup(inside), nowhere, inside);
      assert.notEqual(geo.lookup(outside).countryCode, '', outside);
    }
  });

  it('answers one frozen place for the addresses of one database record, which no caller can change', () => {
    // 8.8.8.8 and 8.8.4.4 lie in one network of the database (Google's, Mountain View).
    const place = geo.lookup('8.8.8.8');
    assert.equal(geo.lookup('8.8.4.4'), place);
    assert.ok(Object.isFrozen(place));
    assert.throws(() => {
      (place as { city: string }).city = 'Elsewhere';
    }, TypeError);
    assert.equal(geo.lookup('8.8.8.8').city, 'Mountain View');
    assert.ok(Object.isFrozen(geo.lookup('10.0.0.1')));
    assert.notEqual(geo.lookup('1.1.1.1'), place);
  });

  it('shares one instance per process', async () => {
    assert.equal(await GeoLookup.open(), geo);
  });
});

describe('GeoLookup.share', () => {
  it('gives worker threads started after it the same places from one copy of the databases in shared memory', async () => {
    await GeoLookup.share();
    const shared = getEnvironmentData('plumb:geo-databases') as { v4: unknown; v6: unknown };
    assert.ok(shared.v4 instanceof SharedArrayBuffer && shared.v6 instanceof SharedArrayBuffer);
    const geoModule = JSON.stringify(sourceModuleUrl('src/ingest/enrich/geo.ts'));
    // Under tsx the worker registers it to load the TypeScript; the compiled run's modules need nothing.
    const register = COMPILED ? '' : `(await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})).register();`;
    // The worker reports whether it was handed the very memory of this thread (a write it makes shows here).
    const worker = new Worker(
      `const { parentPort, getEnvironmentData } = await import('node:worker_threads');
       ${register}
       const { GeoLookup } = await import(${geoModule});
       const geo = await GeoLookup.open();
       parentPort.postMessage({ place: geo.lookup('81.2.69.142'), sab: getEnvironmentData('plumb:geo-databases').v4 });`,
      { eval: true, type: 'module' } as WorkerOptions,
    );
    const { place, sab } = await new Promise<{ place: unknown; sab: SharedArrayBuffer }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    assert.deepEqual(place, { countryCode: 'GB', region: 'England', state: 'England', city: 'London' });
    const mine = new Uint8Array(shared.v4 as SharedArrayBuffer);
    const theirs = new Uint8Array(sab);
    const before = mine[0]!;
    theirs[0] = before ^ 0xff;
    const seen = mine[0];
    theirs[0] = before;
    assert.equal(seen, before ^ 0xff, 'the worker read the same memory, not a copy');
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
