// Umami's raw events imported through /admin/imports/umami: a generated export of realistic size (a month, tens of
// thousands of rows) streamed in, every report number over the imported range checked against the numbers Umami
// had, bad rows reported by line, re-running the same file replacing the import, deleting it removing its hits.

import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../../helpers/app.js';
import { generateUmamiExport, type UmamiExport } from '../../helpers/umami-export.js';

const START = Date.UTC(2026, 2, 1); // 2026-03-01
const DAYS = 30;

/** Half-up rounding of a / b to `places` decimals, written as Plumb writes aggregates. */
function ratio(a: number, b: number, places: number): string {
  const scale = 10n ** BigInt(places);
  const n = (BigInt(a) * scale * 2n + BigInt(b)) / (2n * BigInt(b));
  const whole = n / scale;
  const fraction = (n % scale).toString().padStart(places, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}

describe('/admin/imports/umami', () => {
  let t: TestApp;
  let site: string;
  let source: UmamiExport;
  let firstImport: string;

  const upload = (csv: string, query: string, contentType = 'text/csv') =>
    t.app.inject({
      method: 'POST',
      url: `/admin/imports/umami?${query}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': contentType },
      // In pieces, as a large upload arrives.
      payload: Readable.from((function* () {
        for (let i = 0; i < csv.length; i += 64 * 1024) yield Buffer.from(csv.slice(i, i + 64 * 1024));
      })()),
    });
  const report = async (params: string) => {
    const which = params.startsWith('entity=event') ? `site_id=${site}` : `entity_id=${site}`;
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?${which}&date_from=2026-03-01&date_to=2026-03-30&${params}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Record<string, string>[];
  };
  const asMap = (rows: Record<string, string>[], key: string, value: string) => new Map(rows.map((r) => [r[key]!, Number(r[value])]));

  before(async () => {
    t = await startTestApp();
    const res = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'From Umami', domain: 'umami.example', timezone: 'UTC' });
    site = res.body.id;
    source = generateUmamiExport({ websiteId: '94db1cb1-74f4-4a40-ad6c-962362670409', hostname: 'umami.example', start: START, days: DAYS, visitsPerDay: 400, badRows: true });
  });
  after(() => t.close());

  it('imports every good row and reports the bad ones by line', async () => {
    const res = await upload(source.csv, `site_id=${site}&file_name=umami-march.csv`);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    firstImport = body.id;
    const events = [...source.numbers.eventsByName.values()].reduce((a, b) => a + b, 0);
    assert.equal(body.object, 'import');
    assert.equal(body.status, 'done');
    assert.equal(body.file_name, 'umami-march.csv');
    assert.equal(body.imported, source.numbers.pageviews + events);
    assert.equal(body.rejected, source.badLines.length);
    assert.deepEqual(body.errors.map((e: { line: number }) => e.line), source.badLines);
    assert.match(body.errors[0].message, /created_at/);
    assert.match(body.errors[2].message, /event_type 4/);
    assert.equal(body.first_hit_at.slice(0, 10), '2026-03-01');
    assert.deepEqual([body.replaced, body.overlaps], [[], []]);
  });

  it("answers every report over the imported range with Umami's numbers", async () => {
    const n = source.numbers;
    assert.deepEqual(await report('entity=pageview&aggregates=pageviews,visits,bounce_rate,avg_duration'), [{
      pageviews: String(n.pageviews),
      visits: String(n.visits),
      bounce_rate: ratio(n.bounces, n.visits, 4),
      avg_duration: ratio(n.durationMs, n.visits * 1000, 2),
    }]);
    const byDay = await report('entity=pageview&aggregates=pageviews&date_grouping=day');
    assert.deepEqual(new Map(byDay.map((r) => [r.timestamp!.slice(0, 10), Number(r.pageviews)])), n.pageviewsByDay);
    assert.deepEqual(asMap(await report('entity=pageview&aggregates=pageviews&field_grouping=browser'), 'browser', 'pageviews'), n.pageviewsByBrowser);
    assert.deepEqual(asMap(await report('entity=pageview&aggregates=pageviews&field_grouping=country_code'), 'country_code', 'pageviews'), n.pageviewsByCountry);
    assert.deepEqual(asMap(await report('entity=pageview&aggregates=pageviews&field_grouping=device_type'), 'device_type', 'pageviews'), n.pageviewsByDevice);
    for (const [name, count] of n.eventsByName) {
      assert.deepEqual(await report(`entity=event&entity_name=${name}&aggregates=conversions`), [{ conversions: String(count) }], name);
    }
  });

  it('lists the import, and re-running the same file replaces it instead of counting twice', async () => {
    const list = await t.call(ADMIN_TOKEN, 'GET', `/admin/imports?site_id=${site}`);
    assert.deepEqual(list.body.data.map((i: { id: string; status: string }) => [i.id, i.status]), [[firstImport, 'done']]);
    const again = await upload(source.csv, `site_id=${site}`);
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(again.json().replaced, [firstImport]);
    assert.deepEqual(await report('entity=pageview&aggregates=pageviews,visits'), [{ pageviews: String(source.numbers.pageviews), visits: String(source.numbers.visits) }]);
    const after = await t.call(ADMIN_TOKEN, 'GET', `/admin/imports?site_id=${site}`);
    assert.deepEqual(after.body.data.map((i: { id: string }) => i.id), [again.json().id]);
    firstImport = again.json().id;
  });

  it('keeps live hits when an import is deleted, and removes all of the import', async () => {
    await t.app.inject({ method: 'GET', url: `/?sid=${site}&h=https%3A%2F%2Fumami.example&p=%2Flive`, headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' } });
    await t.flushHits();
    const res = await t.call(ADMIN_TOKEN, 'DELETE', `/admin/imports/${firstImport}`);
    assert.deepEqual(res.body, { id: firstImport, object: 'import', deleted: true });
    assert.deepEqual(await report('entity=pageview&aggregates=pageviews'), [{ pageviews: '0' }]);
    const left = await t.events.listHits(site);
    assert.deepEqual(left.map((h) => h.pathname), ['/live']);
    assert.deepEqual((await t.call(ADMIN_TOKEN, 'GET', `/admin/imports?site_id=${site}`)).body.data, []);
    assert.equal((await t.call(ADMIN_TOKEN, 'DELETE', `/admin/imports/${firstImport}`)).status, 404);
  });

  it("imports the event data column as custom properties by the live rule, and imports exports without it as before", async () => {
    const res = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Umami data', domain: 'data.example', timezone: 'UTC' });
    const dataSite = res.body.id as string;
    const cell = (o: unknown) => `"${JSON.stringify(o).replace(/"/g, '""')}"`;
    const csv = [
      'event_id,session_id,created_at,hostname,url_path,event_type,event_name,event_data',
      `e1,s1,2026-03-02 10:00:00.000+00,data.example,/a,2,Signup,${cell({ plan: 'pro', seats: '3', 'cart.items': '2', revenue: '9.5', currency: 'EUR', __proto__x: "'); DROP TABLE hits; --" })}`,
      'e2,s1,2026-03-02 10:00:01.000+00,data.example,/a,2,Signup,not json',
      'e3,s2,2026-03-02 10:00:02.000+00,data.example,/b,1,,',
      `e4,s3,2026-03-02 10:00:03.000+00,data.example,/c,2,Signup,${cell(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, 'v'])))}`,
    ].join('\n');
    const imported = await upload(csv, `site_id=${dataSite}`);
    assert.equal(imported.statusCode, 200, imported.body);
    assert.deepEqual([imported.json().imported, imported.json().rejected], [4, 0]);
    const hits = await t.events.listHits(dataSite);
    assert.deepEqual(hits.map((h) => h.props?.length ?? 0), [4, 0, 0, 30]);
    assert.deepEqual(hits[0]!.props, [['plan', 'pro'], ['seats', '3'], ['cart.items', '2'], ['__proto__x', "'); DROP TABLE hits; --"]]);
    assert.equal(hits[0]!.value, 0, 'revenue is not imported');
    // The generated export of the tests above has no event_data column: its hits have no properties.
    assert.ok((await t.events.listHits(site)).every((h) => h.props === undefined));
  });

  it("imports Umami Cloud's data export as it downloads (.csv.gz, its columns, times without an offset); plain or compressed, one CSV is one import", async () => {
    const siteOf = async (name: string) => (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name, domain: 'cloud.example', timezone: 'UTC' })).body.id as string;
    const cloudSite = await siteOf('From Umami Cloud');
    const cloud = generateUmamiExport({ websiteId: '0b7a1c38-2f5e-4c4e-9d57-5a2d1f0c9e11', hostname: 'cloud.example', start: START, days: 7, visitsPerDay: 150, cloud: true });
    assert.match(cloud.csv.slice(0, 400), /^website_id,session_id,visit_id,event_id,hostname,.*,region,city,url_path,url_query,utm_source,/);
    assert.match(cloud.csv.split('\n')[1]!, /,2026-03-01 \d\d:\d\d:\d\d,/, 'whole seconds, no offset');
    const gz = gzipSync(cloud.csv);
    const res = await t.app.inject({
      method: 'POST',
      url: `/admin/imports/umami?site_id=${cloudSite}&file_name=export.csv.gz`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/gzip' },
      payload: gz,
    });
    assert.equal(res.statusCode, 200, res.body);
    const events = [...cloud.numbers.eventsByName.values()].reduce((a, b) => a + b, 0);
    assert.deepEqual([res.json().imported, res.json().rejected], [cloud.numbers.pageviews + events, 0]);
    const n = cloud.numbers;
    const cloudReport = async (params: string) =>
      (await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${cloudSite}&date_from=2026-03-01&date_to=2026-03-07&${params}`)).body;
    assert.deepEqual(await cloudReport('aggregates=pageviews,visits,bounce_rate,avg_duration'), [{
      pageviews: String(n.pageviews), visits: String(n.visits), bounce_rate: ratio(n.bounces, n.visits, 4), avg_duration: ratio(n.durationMs, n.visits * 1000, 2),
    }]);
    // The campaign is only in the utm_* columns of these rows.
    const sources = await cloudReport('aggregates=visits&field_grouping=utm_source&sort_by=visits:desc');
    assert.deepEqual(sources.find((r: Record<string, string>) => r.utm_source === 'newsletter'), { utm_source: 'newsletter', visits: String(n.newsletterVisits) });
    assert.deepEqual(asMap(await cloudReport('aggregates=pageviews&field_grouping=browser'), 'browser', 'pageviews'), n.pageviewsByBrowser);
    // ISO 3166-2 region codes are not Plumb's region names: not carried over.
    assert.ok((await t.events.listHits(cloudSite)).every((h) => h.region === '' && h.state === ''));

    // The same CSV uncompressed, sent as psql's would be, is the same import: it replaces the compressed one.
    const plain = await t.app.inject({
      method: 'POST',
      url: `/admin/imports/umami?site_id=${cloudSite}&file_name=export.csv`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/csv' },
      payload: cloud.csv,
    });
    assert.equal(plain.statusCode, 200, plain.body);
    assert.deepEqual(plain.json().replaced, [res.json().id]);
    assert.deepEqual(await cloudReport('aggregates=pageviews'), [{ pageviews: String(n.pageviews) }]);
  });

  it('refuses a damaged or bomb-like .csv.gz with 400, keeping nothing of it', async () => {
    const bombSite = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Gzip', domain: 'gzip.example', timezone: 'UTC' })).body.id as string;
    const good = gzipSync('event_id,session_id,created_at,hostname,url_path,event_type\ne1,s1,2026-03-02 10:00:00,gzip.example,/a,1\n');
    const send = (payload: Buffer) =>
      t.app.inject({ method: 'POST', url: `/admin/imports/umami?site_id=${bombSite}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/csv' }, payload });
    // Cut short: the end of the deflate stream and its CRC are missing.
    const cut = await send(good.subarray(0, good.length - 12));
    assert.equal(cut.statusCode, 400, cut.body);
    assert.match(cut.json().error, /not a readable gzip file/);
    // A changed byte of the compressed data: its CRC-32 no longer matches.
    const altered = Buffer.from(good);
    altered.writeUInt8(altered.readUInt8(altered.length - 9) ^ 0xff, altered.length - 9);
    const bad = await send(altered);
    assert.equal(bad.statusCode, 400, bad.body);
    // Rows, then 8 MB of one repeated row (about 8 kB compressed): inflating over 100 times its size is refused.
    const rows = Array.from({ length: 200 }, (_, i) => `e${i},s${i},2026-03-02 10:00:00,gzip.example,/a,1\n`).join('');
    const bomb = gzipSync(`event_id,session_id,created_at,hostname,url_path,event_type\n${rows}${'e,s,2026-03-02 10:00:00,gzip.example,/b,1\n'.repeat(200_000)}`);
    const refused = await send(bomb);
    assert.equal(refused.statusCode, 400, refused.body);
    assert.match(refused.json().error, /inflates to more than 100 times its size/);
    assert.deepEqual(await t.events.listHits(bombSite), [], 'nothing of a refused file is kept');
    const list = (await t.call(ADMIN_TOKEN, 'GET', `/admin/imports?site_id=${bombSite}`)).body.data as { status: string; failure_reason: string }[];
    assert.deepEqual(list.map((i) => i.status), ['failed', 'failed', 'failed']);
    assert.ok(list.some((i) => /^not a valid export: the gzip file inflates/.test(i.failure_reason)), JSON.stringify(list));
    // The route still answers a good one.
    const ok = await send(good);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().imported, 1);
  });

  it('refuses what is not an Umami export, unknown sites and missing parameters, storing nothing', async () => {
    const notUmami = await upload('date,visitors\n2026-03-01,5\n', `site_id=${site}`);
    assert.equal(notUmami.statusCode, 400);
    assert.match(notUmami.json().error, /not an Umami export/);
    assert.equal((await upload('', `site_id=${site}`)).statusCode, 400);
    assert.equal((await upload(source.csv.slice(0, 2000), 'site_id=ZZZZZZZZ')).statusCode, 404);
    const noSite = await upload('a,b\n', '');
    assert.equal(noSite.statusCode, 400);
    assert.ok(Array.isArray(noSite.json().errors.site_id));
    const wrongType = await t.app.inject({ method: 'POST', url: `/admin/imports/umami?site_id=${site}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, payload: '{}' });
    assert.equal(wrongType.statusCode, 400);
    assert.equal((await t.app.inject({ method: 'POST', url: `/admin/imports/umami?site_id=${site}`, headers: { 'content-type': 'text/csv' }, payload: 'a' })).statusCode, 401);
    assert.equal((await t.call(ADMIN_TOKEN, 'DELETE', '/admin/imports/not-an-id')).status, 404);
    assert.equal((await t.events.listHits(site)).length, 1, 'only the live hit');
  });
});

describe('an Umami upload longer than the request timeout', () => {
  it('is read to its end and answered (it is parsed as it arrives), while other slow requests are still cut off', async () => {
    const t = await startTestApp({ requestTimeoutMs: 300 });
    let upload: ReturnType<typeof httpRequest> | undefined;
    try {
      const port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
      const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Slow upload', domain: 'umami.example', timezone: 'UTC' })).body.id;
      const { csv, numbers } = generateUmamiExport({ websiteId: '94db1cb1-74f4-4a40-ad6c-962362670409', hostname: 'umami.example', start: START, days: 2, visitsPerDay: 50 });
      const half = csv.indexOf('\n', csv.length >> 1) + 1;
      const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({
          host: '127.0.0.1', port, method: 'POST', path: `/admin/imports/umami?site_id=${site}`,
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/csv' },
        }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        upload = req;
        req.write(csv.slice(0, half));
        // The rest only once the server has cut off a slow request that started after this one: the import's
        // upload has then lasted longer than the request timeout too, as a large export's does.
        (async () => {
          const slow = connect(port, '127.0.0.1');
          let received = '';
          slow.on('data', (d) => (received += d.toString()));
          const closed = new Promise<void>((resolve) => slow.on('close', () => resolve()));
          // Its body trickles in (never idle long enough for the idle timeout) and never ends.
          slow.write(`POST /v1/sites HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${OWNER_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`);
          const drip = setInterval(() => slow.writable && slow.write(' '), 100);
          await closed;
          clearInterval(drip);
          assert.match(received, /^HTTP\/1\.1 408/);
          req.end(csv.slice(half));
        })().catch(reject);
      });
      const { status, body } = await answered;
      assert.equal(status, 200, body);
      const result = JSON.parse(body);
      assert.deepEqual([result.imported, result.rejected], [csv.trimEnd().split('\n').length - 1, 0]);
      const pageviews = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&date_from=2026-03-01&date_to=2026-03-02`);
      assert.deepEqual(pageviews.body, [{ pageviews: String(numbers.pageviews) }]);
    } finally {
      upload?.destroy();
      await t.close();
    }
  });
});
