// Import files made to hurt the server, through every route that takes them (/admin/imports, the dashboard's upload,
// `plumb import`, /admin/import): zip bombs that declare their size honestly, zips of thousands of entries, of copies
// of one table, of archives, and files of one endless line. Each is refused with 400 and a message naming the
// problem, quickly, with nothing of it imported and the server's memory not growing with what the file inflates to.

import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { constants, crc32, createDeflateRaw, gzipSync } from 'node:zlib';
import { strToU8, zipSync } from 'fflate';
import { run } from '../../src/cli/main.js';
import { zipEntries } from '../../src/ingest/peer-imports/zip-entries.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { Browser, givePassword, logIn } from '../dashboard/helpers.js';

const MiB = 1024 * 1024;

/** A route an import file is sent by, answering as an HTTP route does. */
type Send = (kind: string, site: string, body: Buffer | string, contentType: string) => Promise<{ statusCode: number; body: string; json(): { error: string } }>;

interface RawEntry {
  name: string;
  /** The entry's bytes as stored: deflated (method 8) or as they are (method 0). */
  data: Buffer;
  crc: number;
  size: number;
  method?: 0 | 8;
}

/**
 * A raw deflate stream of `head` then `mib` MiB of zero bytes, with its CRC-32 and size: an honest bomb (the
 * declared size is the true one), made in well under a second by repeating one fully flushed block of zeros
 * (a full flush empties the window, so the block's bytes are the same wherever it stands).
 */
async function deflatedZeros(head: string, mib: number): Promise<Omit<RawEntry, 'name'>> {
  const deflate = createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (c: Buffer) => out.push(c));
  const segment = async (bytes: Buffer) => {
    out.length = 0;
    deflate.write(bytes);
    await new Promise<void>((resolve) => deflate.flush(constants.Z_FULL_FLUSH, () => resolve()));
    return Buffer.concat(out);
  };
  const first = await segment(Buffer.from(head));
  const zeros = Buffer.alloc(MiB);
  const block = await segment(zeros);
  deflate.destroy();
  let crc = crc32(head);
  for (let i = 0; i < mib; i++) crc = crc32(zeros, crc);
  // 0x03 0x00: an empty final block.
  return { data: Buffer.concat([first, ...Array<Buffer>(mib).fill(block), Buffer.from([0x03, 0x00])]), crc, size: Buffer.byteLength(head) + mib * MiB };
}

const stored = (name: string, data: Buffer): RawEntry => ({ name, data, crc: crc32(data), size: data.length, method: 0 });

/** A zip (no zip64) of entries whose bytes are given as stored in it: what fflate cannot make from a stream. */
function zipOfRaw(entries: RawEntry[]): Buffer {
  const parts: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(e.method ?? 8, 8);
    local.writeUInt32LE(e.crc >>> 0, 14);
    local.writeUInt32LE(e.data.length, 18);
    local.writeUInt32LE(e.size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(e.method ?? 8, 10);
    central.writeUInt32LE(e.crc >>> 0, 16);
    central.writeUInt32LE(e.data.length, 20);
    central.writeUInt32LE(e.size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    parts.push(local, name, e.data);
    directory.push(central, name);
    offset += 30 + name.length + e.data.length;
  }
  const dir = Buffer.concat(directory);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, dir, end]);
}

const VISITORS = 'imported_visitors_20260105_20260106.csv';
const PLAUSIBLE_HEADER = 'date,visitors,pageviews,bounces,visits,visit_duration\n';
/** A real (small) Plausible export: 276 pageviews over two days. */
const PLAUSIBLE_FILES = {
  [VISITORS]: `${PLAUSIBLE_HEADER}2026-01-05,100,176,40,120,6000\n2026-01-06,70,100,30,80,3000\n`,
  'imported_pages_20260105_20260106.csv': 'date,hostname,page,visits,visitors,pageviews\n2026-01-05,example.com,/,120,100,176\n',
};
const FATHOM_HEADER = 'Timestamp,Pageviews,Visits\n';
const zipOf = (files: Record<string, string>) => Buffer.from(zipSync(Object.fromEntries(Object.entries(files).map(([n, t]) => [n, strToU8(t)]))));
/** Text that compresses about as little as a CSV of ids: base64 of random bytes, no line break in it. */
const noise = (chars: number) => randomBytes(Math.ceil((chars * 3) / 4)).toString('base64').slice(0, chars);

describe('hostile import files', () => {
  let t: TestApp;
  let owner: Browser;
  let csrf: string;
  let env: Record<string, string>;
  let dir: string;

  before(async () => {
    t = await startTestApp();
    await givePassword(t.meta);
    owner = new Browser(t.app);
    csrf = await logIn(owner);
    env = { PLUMB_URL: await t.app.listen({ port: 0, host: '127.0.0.1' }), PLUMB_ADMIN_TOKEN: ADMIN_TOKEN };
    dir = mkdtempSync(join(tmpdir(), 'plumb-hostile-'));
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let sites = 0;
  const newSite = async () => {
    const res = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: `hostile ${++sites}`, domain: `hostile-${sites}.example`, timezone: 'UTC' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.id as string;
  };
  const viaAdmin = (kind: string, site: string, body: Buffer | string, contentType: string) =>
    t.app.inject({ method: 'POST', url: `/admin/imports/${kind}?site_id=${site}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': contentType }, payload: body });
  const viaDashboard = (kind: string, site: string, body: Buffer | string, contentType: string) =>
    owner.request({ method: 'POST', url: `/dashboard/api/sites/${site}/imports/${kind}`, headers: { 'content-type': contentType, 'x-plumb-csrf': csrf }, payload: body });
  /** `plumb import KIND FILE --site SITE`, the file written first; answered like a route: status and error. */
  const viaCli = async (kind: string, site: string, body: Buffer | string) => {
    const file = join(dir, `${kind}-${site}.${kind === 'umami' ? 'csv' : 'zip'}`);
    writeFileSync(file, body);
    const err: string[] = [];
    const code = await run(['import', kind, file, '--site', site], env, () => undefined, (l) => err.push(l));
    return { statusCode: code === 0 ? 200 : 400, json: () => ({ error: err.join('\n') }), body: err.join('\n') };
  };
  const ROUTES: Record<string, Send> = { admin: viaAdmin, dashboard: viaDashboard, cli: viaCli };

  const pageviews = async (site: string) => {
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&date_from=2026-01-05&date_to=2026-01-06`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return Number(res.body[0].pageviews);
  };
  const statuses = async (site: string) =>
    ((await t.call(ADMIN_TOKEN, 'GET', `/admin/imports?site_id=${site}`)).body.data as { status: string }[]).map((i) => i.status);

  /** Sends `body` by every route to a site holding the real export, expecting a quick 400 matching `reason` and nothing imported. */
  async function refusedEverywhere(kind: 'plausible' | 'fathom' | 'umami', body: Buffer | string, reason: RegExp, routes = ROUTES) {
    const contentType = kind === 'umami' ? 'text/csv' : 'application/zip';
    for (const [route, send] of Object.entries(routes)) {
      const site = await newSite();
      const real = kind === 'plausible' ? await viaAdmin('plausible', site, zipOf(PLAUSIBLE_FILES), 'application/zip') : undefined;
      if (real) assert.equal(real.statusCode, 200, real.body);
      const before = kind === 'plausible' ? 276 : 0;
      const started = Date.now();
      const res = await send(kind, site, body, contentType);
      const took = Date.now() - started;
      assert.equal(res.statusCode, 400, `${route}: ${res.body.slice(0, 500)}`);
      assert.match(res.json().error, reason, route);
      assert.match(res.json().error, /nothing was imported/, route);
      assert.ok(took < 10_000, `${route}: answered in ${took} ms`);
      assert.equal(await pageviews(site), before, `${route}: nothing of the refused file counts`);
      assert.deepEqual(await statuses(site), [...(real ? ['done'] : []), 'failed'], route);
    }
  }

  describe('zip bombs that declare their size honestly', () => {
    it('refuses a Plausible export whose visitors table inflates 1,000 times (1 MB to 1 GiB) from its directory, inflating nothing', async () => {
      const bomb = zipOfRaw([{ name: VISITORS, ...(await deflatedZeros(PLAUSIBLE_HEADER, 1024)) }]);
      assert.ok(bomb.length < 1.5 * MiB);
      await refusedEverywhere('plausible', bomb, /its files inflate to more than 100 times the zip's [\d,]+ bytes \(a zip bomb's mark/);
    });

    it("refuses a Fathom export whose Site.csv inflates 1,000 times the same way", async () => {
      const bomb = zipOfRaw([{ name: 'Site.csv', ...(await deflatedZeros(FATHOM_HEADER, 1024)) }]);
      await refusedEverywhere('fathom', bomb, /its files inflate to more than 100 times/);
    });

    it('stops a bomb padded to pass the ratio at the first line longer than 1 MiB, with memory flat', async () => {
      // 200 MiB of zeros after the header (one endless line) and 2.5 MB of noise: 80 times the zip, within the
      // ratio; the rows' reader gives up at 1 MiB of the line, where it held the whole line before.
      const bomb = zipOfRaw([{ name: VISITORS, ...(await deflatedZeros(PLAUSIBLE_HEADER, 200)) }, stored('padding.bin', randomBytes(2.5 * MiB))]);
      const rss = process.memoryUsage().rss;
      await refusedEverywhere('plausible', bomb, new RegExp(`line 2 of ${VISITORS} is longer than 1,048,576 characters`), { admin: viaAdmin });
      const grew = (process.memoryUsage().rss - rss) / MiB;
      assert.ok(grew < 150, `the process grew by ${Math.round(grew)} MiB reading a line of 200 MiB`);
    });

    it('refuses files declaring more than 8 GiB together, whatever the ratio (a zip of 100 MB, most of it a hole on disk)', async () => {
      // The directory is all that is read: 100 MB of a stored entry (a hole in the file, never written) lets three
      // entries declaring 3 GiB each pass the ratio; their 9 GiB do not pass MAX_INFLATED_BYTES.
      const holeBytes = 100 * 1000 * 1000;
      const big = (name: string): RawEntry => ({ name, data: Buffer.from([0x03, 0x00]), crc: 0, size: 3 * 1024 * MiB });
      // The padding entry's local header, then its hole, then the rest of a zip whose offsets count the hole.
      const entries = [{ name: 'padding.bin', data: Buffer.alloc(holeBytes), crc: 0, size: holeBytes, method: 0 as const }, big('imported_visitors_a.csv'), big('imported_pages_a.csv'), big('imported_sources_a.csv')];
      const zip = zipOfRaw(entries);
      const file = join(dir, 'nine-gib.zip');
      const fd = openSync(file, 'w');
      const localHeader = 30 + 'padding.bin'.length;
      writeSync(fd, zip, 0, localHeader, 0);
      writeSync(fd, zip, localHeader + holeBytes, zip.length - localHeader - holeBytes, localHeader + holeBytes);
      closeSync(fd);
      assert.equal(statSync(file).size, zip.length);
      await assert.rejects(zipEntries(file, (message) => new Error(message)), /its files inflate to more than 8,589,934,592 bytes, the most an import reads/);
    });
  });

  describe('zips of many entries, copies and archives', () => {
    it('refuses 3,000 entries before reading any', async () => {
      const files: Record<string, string> = {};
      for (let i = 0; i < 3000; i++) files[`imported_visitors_2026${String(i).padStart(4, '0')}_20260106.csv`] = PLAUSIBLE_FILES[VISITORS];
      await refusedEverywhere('plausible', zipOf(files), /the zip has 3,000 entries, more than the 1,000 an export may have/);
    });

    it('refuses one table in two files, whether named alike or not, instead of adding it up', async () => {
      const copy = 'imported_visitors_20250105_20250106.csv';
      await refusedEverywhere('plausible', zipOf({ ...PLAUSIBLE_FILES, [copy]: PLAUSIBLE_FILES[VISITORS] }),
        new RegExp(`${copy} and ${VISITORS} are both the imported_visitors table|${VISITORS} and ${copy} are both the imported_visitors table`), { admin: viaAdmin });
      const entry = (name: string, text: string) => stored(name, Buffer.from(text));
      const twice = zipOfRaw([entry(VISITORS, PLAUSIBLE_FILES[VISITORS]), entry(VISITORS, PLAUSIBLE_FILES[VISITORS])]);
      await refusedEverywhere('plausible', twice, new RegExp(`${VISITORS} is in the zip more than once`), { dashboard: viaDashboard });
      const site = `${FATHOM_HEADER}2026-01-05 10:00:00,8,3\n`;
      await refusedEverywhere('fathom', zipOf({ 'Site.csv': site, 'Devices.csv': 'Timestamp,Device,Pageviews\n', 'DeviceTypes.csv': 'Timestamp,Device Type,Pageviews\n' }),
        /Devices\.csv and DeviceTypes\.csv are the same table/, { admin: viaAdmin });
    });

    it('refuses an archive inside the export, by its name or by its bytes', async () => {
      const inner = zipOf(PLAUSIBLE_FILES);
      const withInner = (name: string) => zipOfRaw([stored(VISITORS, Buffer.from(PLAUSIBLE_FILES[VISITORS])), stored(name, inner)]);
      await refusedEverywhere('plausible', withInner('more.zip'), /more\.zip in the zip is itself an archive/, { admin: viaAdmin });
      await refusedEverywhere('plausible', withInner('imported_pages_20260105_20260106.csv'), /imported_pages_20260105_20260106\.csv in the zip is itself an archive/, { admin: viaAdmin });
      const gz = zipOfRaw([stored('Site.csv', Buffer.from(`${FATHOM_HEADER}2026-01-05 10:00:00,8,3\n`)), stored('Pages.csv', gzipSync('Timestamp,Pathname,Views\n'))]);
      await refusedEverywhere('fathom', gz, /Pages\.csv in the zip is itself an archive/, { dashboard: viaDashboard });
    });
  });

  describe('files of one endless line', () => {
    it('refuses an Umami CSV at the first line longer than 1 MiB, before the rest is read', async () => {
      const body = `created_at,session_id,event_type,url_path\n${'x'.repeat(3 * MiB)}`;
      await refusedEverywhere('umami', body, /line 2 of the file is longer than 1,048,576 characters/);
    });

    it('refuses a CSV entry of a Plausible or Fathom zip with a line longer than 1 MiB (text that compresses like a real one)', async () => {
      const line = noise(1.5 * MiB);
      await refusedEverywhere('plausible', zipOf({ ...PLAUSIBLE_FILES, 'imported_browsers_20260105_20260106.csv': `date,browser,visitors,visits,pageviews,bounces,visit_duration\n2026-01-05,${line}\n` }),
        /line 2 of imported_browsers_20260105_20260106\.csv is longer than 1,048,576 characters/, { admin: viaAdmin, cli: viaCli });
      await refusedEverywhere('fathom', zipOf({ 'Site.csv': `${FATHOM_HEADER}2026-01-05 10:00:00,8,3\n`, 'Pages.csv': `Timestamp,Pathname,Views\n2026-01-05 10:00:00,/${line},1\n` }),
        /line 2 of Pages\.csv is longer than 1,048,576 characters/, { dashboard: viaDashboard });
    });

    it("refuses an NDJSON line longer than 1 MiB as a bad line, without parsing it; the others are imported", async () => {
      const site = await newSite();
      const hit = (path: string) => JSON.stringify({ type: 'pageview', site_id: site, timestamp: '2026-01-05 10:00:00', url: `https://hostile.example${path}`, user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0', ip: '203.0.113.9' });
      const body = [hit('/a'), `{"url":"${'x'.repeat(3 * MiB)}"}`, hit('/b')].join('\n');
      const res = await t.app.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' }, payload: body });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { imported: 2, rejected: 1, errors: [{ line: 2, message: "the line is longer than 1,048,576 characters, more than any hit's" }] });
    });
  });
});
