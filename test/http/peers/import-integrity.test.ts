// What an import of a peer's export may trust, through /admin/imports and the dashboard's upload alike: a zip whose
// entry was altered, or declares a wrong CRC-32 or size, is refused whole, naming the entry, with nothing of it
// kept (no day, no event); the same export sent again, zipped anew (other times, compression, order, folder), replaces
// the earlier import instead of counting twice; a day the calendar lacks is refused by all three importers.

import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { strToU8, zipSync, type Zippable } from 'fflate';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../../helpers/app.js';
import { locate, withCrc, withData, withSize } from '../../helpers/zip-damage.js';
import { Browser, givePassword, logIn } from '../../dashboard/helpers.js';

type Kind = 'plausible' | 'fathom';

/** One export of each kind: its files, the one to damage, the text to alter in it, and its days' numbers. */
const EXPORTS: Record<Kind, { files: Record<string, string>; damaged: string; row: [string, string]; range: string; pageviews: number; event: string }> = {
  plausible: {
    files: {
      'imported_visitors_20260105_20260106.csv': 'date,visitors,pageviews,bounces,visits,visit_duration\n2026-01-05,10,25,4,12,600\n2026-01-06,7,15,3,8,300\n',
      'imported_pages_20260105_20260106.csv': 'date,hostname,page,visits,visitors,pageviews\n2026-01-05,example.com,/,12,10,25\n2026-01-06,example.com,/,8,7,15\n',
      'imported_custom_events_20260105_20260106.csv': 'date,name,link_url,path,visitors,events\n2026-01-05,Signup,,,3,4\n',
    },
    damaged: 'imported_visitors_20260105_20260106.csv',
    // One row's 10 visitors made 90, its CRC-32 left as it was.
    row: ['2026-01-05,10,', '2026-01-05,90,'],
    range: 'date_from=2026-01-05&date_to=2026-01-06',
    pageviews: 40,
    event: 'Signup',
  },
  fathom: {
    files: {
      'Site.csv': 'Timestamp,Pageviews,Visits\n2026-01-05 10:00:00,10,4\n2026-01-05 11:00:00,22,9\n',
      'Pages.csv': 'Timestamp,Pathname,Views\n2026-01-05 10:00:00,/,10\n2026-01-05 11:00:00,/,22\n',
      'Events.csv': 'Timestamp,Event,Completions\n2026-01-05 10:00:00,Download,2\n',
    },
    damaged: 'Site.csv',
    row: ['10:00:00,10,', '10:00:00,90,'],
    range: 'date_from=2026-01-05&date_to=2026-01-06',
    pageviews: 32,
    event: 'Download',
  },
};

/** The files as a zip: `stored` (level 0) so their text can be altered in place; in `folder`, in this order. */
function zipOf(files: Record<string, string>, o: { stored?: boolean; folder?: string; mtime?: Date } = {}): Uint8Array {
  const entries: Zippable = {};
  for (const [name, text] of Object.entries(files)) entries[`${o.folder ?? ''}${name}`] = [strToU8(text), { level: o.stored ? 0 : 6, mtime: o.mtime ?? new Date() }];
  return zipSync(entries);
}

describe('peer export zips that are damaged, and exports sent again', () => {
  let t: TestApp;
  let owner: Browser;
  let csrf: string;

  before(async () => {
    t = await startTestApp();
    // The dashboard's owner is account 1's, as OWNER_TOKEN is: both routes reach the same sites.
    await givePassword(t.meta);
    owner = new Browser(t.app);
    csrf = await logIn(owner);
  });
  after(() => t.close());

  let sites = 0;
  const newSite = async (name: string) => {
    const res = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name, domain: `site-${++sites}.example`, timezone: 'UTC' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.id as string;
  };
  const viaAdmin = (kind: string, site: string, body: Uint8Array | string, contentType = 'application/zip') =>
    t.app.inject({
      method: 'POST',
      url: `/admin/imports/${kind}?site_id=${site}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': contentType },
      payload: Buffer.from(body),
    });
  const viaDashboard = (kind: string, site: string, body: Uint8Array | string, contentType = 'application/zip') =>
    owner.request({
      method: 'POST',
      url: `/dashboard/api/sites/${site}/imports/${kind}`,
      headers: { 'content-type': contentType, 'x-plumb-csrf': csrf },
      payload: Buffer.from(body),
    });
  const ROUTES = { admin: viaAdmin, dashboard: viaDashboard };
  const pageviews = async (site: string, range: string) => {
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&${range}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return Number(res.body[0].pageviews);
  };
  const events = async (site: string) => (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/events`)).body.data.map((e: { name: string }) => e.name);
  const imports = async (site: string) =>
    (await t.call(ADMIN_TOKEN, 'GET', `/admin/imports?site_id=${site}`)).body.data as { id: string; status: string; failure_reason: string | null }[];

  for (const kind of ['plausible', 'fathom'] as const) {
    it(`refuses a ${kind} zip whose entry was altered or declares a wrong CRC-32 or size, naming the entry, keeping nothing`, async () => {
      const x = EXPORTS[kind];
      const stored = zipOf(x.files, { stored: true });
      const deflated = zipOf(x.files);
      const entry = locate(stored, x.damaged);
      const inflatedSize = locate(deflated, x.damaged).uncompressedSize;
      const damages: [string, Uint8Array, RegExp][] = [
        ['a row altered, its CRC-32 kept', withData(stored, x.damaged, ...x.row), /CRC-32 is [0-9a-f]{8}, the zip declares [0-9a-f]{8}/],
        ['a wrong CRC-32 in its headers', withCrc(stored, x.damaged, entry.crc32 ^ 0x00010000), /CRC-32 is [0-9a-f]{8}, the zip declares [0-9a-f]{8}/],
        ['a compressed entry declaring fewer bytes than it holds', withSize(deflated, x.damaged, inflatedSize - 3), new RegExp(`holds more than the ${inflatedSize - 3} bytes`)],
        ['a compressed entry declaring more bytes than it holds', withSize(deflated, x.damaged, inflatedSize + 3), new RegExp(`holds ${inflatedSize} bytes, the zip declares ${inflatedSize + 3}`)],
        ['a stored entry whose two sizes differ', withSize(stored, x.damaged, entry.uncompressedSize - 1), /stored uncompressed, yet its sizes differ/],
      ];
      for (const [route, send] of Object.entries(ROUTES)) {
        const site = await newSite(`${kind} damaged, ${route}`);
        for (const [what, zip, reason] of damages) {
          const res = await send(kind, site, zip);
          assert.equal(res.statusCode, 400, `${route}, ${what}: ${res.body}`);
          const { error } = res.json();
          assert.ok(error.includes(`${x.damaged} in the zip is damaged`), `${route}, ${what}: ${error}`);
          assert.match(error, reason, `${route}, ${what}`);
          assert.match(error, /nothing was imported, export it again/);
        }
        // Nothing of them counts or was created, and each is listed as failed, saying why.
        assert.equal(await pageviews(site, x.range), 0, route);
        assert.deepEqual(await events(site), [], route);
        const listed = await imports(site);
        assert.equal(listed.length, damages.length);
        for (const i of listed) {
          assert.equal(i.status, 'failed');
          assert.match(i.failure_reason ?? '', new RegExp(`^not a valid export: ${x.damaged.replace(/\./g, '\\.')} in the zip is damaged`));
        }
        // The same export undamaged imports whole.
        const intact = await send(kind, site, stored);
        assert.equal(intact.statusCode, 200, intact.body);
        assert.equal(await pageviews(site, x.range), x.pageviews);
        assert.deepEqual(await events(site), [x.event]);
      }
    });
  }

  it('refuses a zip whose damaged entry is one the importer does not read', async () => {
    const site = await newSite('damaged extra file');
    const files = { ...EXPORTS.plausible.files, 'notes.txt': 'made with care\n' };
    const zip = zipOf(files, { stored: true });
    const res = await viaAdmin('plausible', site, withData(zip, 'notes.txt', 'care', 'CARE'));
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.json().error, /^notes\.txt in the zip is damaged \(its CRC-32/);
    assert.equal(await pageviews(site, EXPORTS.plausible.range), 0);
  });

  for (const kind of ['plausible', 'fathom'] as const) {
    it(`knows a ${kind} export sent again, zipped anew, by its content: it replaces the earlier import`, async () => {
      const x = EXPORTS[kind];
      const site = await newSite(`${kind} again`);
      // The export's own zip (compressed, in a folder, made in 2025) through the dashboard...
      const first = await viaDashboard(kind, site, zipOf(x.files, { folder: 'example.com/', mtime: new Date('2025-06-01T12:00:00Z') }));
      assert.equal(first.statusCode, 200, first.body);
      assert.deepEqual(first.json().replaced, []);
      // ...then its files zipped again as the CLI zips a folder (stored, no folder, now, in another order).
      const reordered = Object.fromEntries(Object.entries(x.files).reverse());
      const again = await viaAdmin(kind, site, zipOf(reordered, { stored: true }));
      assert.equal(again.statusCode, 200, again.body);
      assert.deepEqual([again.json().replaced, again.json().overlaps], [[first.json().id], []]);
      assert.equal(await pageviews(site, x.range), x.pageviews, 'counted once');
      assert.deepEqual((await imports(site)).map((i) => i.id), [again.json().id]);
      // Once more through the dashboard: the dashboard's upload is known the same way.
      const third = await viaDashboard(kind, site, zipOf(x.files, { stored: true, mtime: new Date('2024-01-01T00:00:00Z') }));
      assert.deepEqual(third.json().replaced, [again.json().id]);
      assert.equal(await pageviews(site, x.range), x.pageviews, 'still counted once');
      // Another export of the same days (one number differs) is another import: listed as overlapping, kept.
      const other = await viaAdmin(kind, site, zipOf({ ...x.files, [x.damaged]: x.files[x.damaged]!.replace(x.row[0], x.row[1]) }));
      assert.equal(other.statusCode, 200, other.body);
      assert.deepEqual([other.json().replaced, other.json().overlaps], [[], [third.json().id]]);
      assert.equal((await imports(site)).length, 2);
    });
  }

  it('knows an Umami CSV sent again by its bytes, through either route', async () => {
    const site = await newSite('umami again');
    const csv = 'event_id,session_id,created_at,hostname,url_path,event_type,event_name\ne1,s1,2026-01-05 10:00:00,example.com,/a,1,\ne2,s1,2026-01-05 10:01:00,example.com,/b,1,\n';
    const first = await viaDashboard('umami', site, csv, 'text/csv');
    assert.equal(first.statusCode, 200, first.body);
    const again = await viaAdmin('umami', site, csv, 'text/csv');
    assert.deepEqual(again.json().replaced, [first.json().id]);
    assert.equal(await pageviews(site, 'date_from=2026-01-05&date_to=2026-01-05'), 2);
    // Compressed, as Umami Cloud's export downloads, through the dashboard: the same CSV, so the same import.
    const gzipped = await viaDashboard('umami', site, gzipSync(csv), 'application/gzip');
    assert.equal(gzipped.statusCode, 200, gzipped.body);
    assert.deepEqual(gzipped.json().replaced, [again.json().id]);
    assert.equal(await pageviews(site, 'date_from=2026-01-05&date_to=2026-01-05'), 2);
  });

  it('refuses a day the calendar lacks in all three importers, in every form of time they read, by line', async () => {
    const site = await newSite('leap days');
    // Umami: Umami Cloud's form without an offset, psql's with one, ISO 8601; 2024 had a 29 February, 2025 did not.
    const csv = [
      'event_id,session_id,created_at,hostname,url_path,event_type,event_name',
      'e1,s1,2025-02-28 10:00:00,example.com,/feb-28,1,',
      'e2,s2,2025-02-29 10:00:00,example.com,/cloud-form,1,',
      'e3,s3,2025-02-29 10:00:00.123+00,example.com,/psql-form,1,',
      'e4,s4,2024-02-29 10:00:00+00,example.com,/leap-day,1,',
      'e5,s5,2025-04-31T10:00:00Z,example.com,/april-31,1,',
      'e6,s6,2025-03-01 24:00:00,example.com,/hour-24,1,',
      'e7,s7,2025-03-01 10:00:00.5,example.com,/march-1,1,',
    ].join('\n');
    const umami = await viaAdmin('umami', site, csv, 'text/csv');
    assert.equal(umami.statusCode, 200, umami.body);
    assert.deepEqual([umami.json().imported, umami.json().rejected], [3, 4]);
    assert.deepEqual(umami.json().errors.map((e: { line: number }) => e.line), [3, 4, 6, 7]);
    for (const e of umami.json().errors) assert.match(e.message, /^created_at must be a time of the calendar/);
    const hits = await t.events.listHits(site);
    assert.deepEqual(hits.map((h) => [h.pathname, h.timestamp.toISOString()]).sort(), [
      ['/feb-28', '2025-02-28T10:00:00.000Z'], ['/leap-day', '2024-02-29T10:00:00.000Z'], ['/march-1', '2025-03-01T10:00:00.500Z'],
    ]);
    // Plausible's days and Fathom's hours by the same rule.
    const plausible = await viaAdmin('plausible', site, zipOf({
      'imported_visitors.csv': 'date,visitors,pageviews,bounces,visits,visit_duration\n2025-02-28,1,1,0,1,0\n2025-02-29,2,2,0,2,0\n2024-02-29,3,3,0,3,0\n',
    }));
    assert.deepEqual([plausible.json().imported, plausible.json().rejected], [2, 1]);
    assert.deepEqual(plausible.json().errors.map((e: { line: number }) => e.line), [3]);
    const fathom = await viaAdmin('fathom', site, zipOf({
      'Site.csv': 'Timestamp,Pageviews\n2025-02-28 10:00:00,1\n2025-02-29 10:00:00,2\n2024-02-29T10:00:00Z,3\n2025-03-01 10:00:00+00,4\n',
    }));
    assert.deepEqual([fathom.json().imported, fathom.json().rejected], [3, 1]);
    assert.deepEqual(fathom.json().errors.map((e: { line: number }) => e.line), [3]);
  });
});
