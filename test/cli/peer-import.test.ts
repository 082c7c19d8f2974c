// `plumb import plausible|fathom` against a running server over real HTTP, for what an import may trust: a Fathom
// folder imported twice (the CLI zips it anew each time), or then as the export's zip, counts once; a damaged export
// zip is refused naming its entry, with nothing imported.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { strToU8, zipSync } from 'fflate';
import { run } from '../../src/cli/main.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { locate, withCrc, withData } from '../helpers/zip-damage.js';

describe('plumb import of peer exports', () => {
  let t: TestApp;
  let env: Record<string, string>;
  let dir: string;
  before(async () => {
    t = await startTestApp();
    env = { PLUMB_URL: await t.app.listen({ port: 0, host: '127.0.0.1' }), PLUMB_ADMIN_TOKEN: ADMIN_TOKEN };
    dir = mkdtempSync(join(tmpdir(), 'plumb-cli-peer-'));
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const plumb = async (args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await run(args, env, (l) => out.push(l), (l) => err.push(l));
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
  const newSite = async (name: string) => (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name, timezone: 'UTC' })).body.id as string;
  const pageviews = async (site: string) =>
    (await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&date_from=2026-01-05&date_to=2026-01-06`)).body;

  it("imports a Fathom folder twice and counts it once: the second replaces the first", async () => {
    const site = await newSite('Fathom folder twice');
    // Fathom's export unpacked: 4 hours of 8 pageviews, 32.
    const folder = join(dir, 'example.com');
    mkdirSync(folder);
    writeFileSync(join(folder, 'Site.csv'), 'Timestamp,Pageviews,Visits\n2026-01-05 10:00:00,8,3\n2026-01-05 11:00:00,8,3\n2026-01-05 12:00:00,8,3\n2026-01-06 09:00:00,8,3\n');
    writeFileSync(join(folder, 'Pages.csv'), 'Timestamp,Pathname,Views\n2026-01-05 10:00:00,/,8\n');
    const first = await plumb(['import', 'fathom', folder, '--site', site, '--json']);
    assert.equal(first.code, 0, first.err);
    const firstId = JSON.parse(first.out).id;
    // A zip's times are in 2-second steps: past the next one, the CLI's zip of the folder has other bytes, as it
    // has when a user runs the command again.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const second = await plumb(['import', 'fathom', folder, '--site', site]);
    assert.equal(second.code, 0, second.err);
    assert.deepEqual(await pageviews(site), [{ pageviews: '32' }], 'not 64');
    assert.match(second.out, new RegExp(`replaced import ${firstId}: the same export, imported before`));
    // The export's own zip (the folder inside it, compressed) is the same export too.
    const zip = join(dir, 'example.com.zip');
    writeFileSync(zip, zipSync({
      'example.com/Pages.csv': strToU8(readFileSync(join(folder, 'Pages.csv'), 'utf8')),
      'example.com/Site.csv': strToU8(readFileSync(join(folder, 'Site.csv'), 'utf8')),
    }, { mtime: new Date('2025-12-31T00:00:00Z') }));
    const third = await plumb(['import', 'fathom', zip, '--site', site, '--json']);
    assert.equal(third.code, 0, third.err);
    assert.deepEqual(await pageviews(site), [{ pageviews: '32' }], 'not 64');
    assert.equal(JSON.parse(third.out).replaced.length, 1);
    const list = await plumb(['import', 'list', '--site', site]);
    assert.equal(list.out.split('\n').length, 1, list.out);
  });

  it('refuses a damaged Plausible or Fathom zip naming the entry, and imports nothing', async () => {
    const plausible = zipSync({
      'imported_visitors.csv': [strToU8('date,visitors,pageviews,bounces,visits,visit_duration\n2026-01-05,10,25,4,12,600\n'), { level: 0 }],
    });
    const fathom = zipSync({ 'example.com/Site.csv': [strToU8('Timestamp,Pageviews\n2026-01-05 10:00:00,10\n'), { level: 0 }] });
    const cases: [string, string, Uint8Array, string][] = [
      ['plausible', 'altered.zip', withData(plausible, 'imported_visitors.csv', '2026-01-05,10,', '2026-01-05,90,'), 'imported_visitors.csv'],
      ['plausible', 'bad-crc.zip', withCrc(plausible, 'imported_visitors.csv', locate(plausible, 'imported_visitors.csv').crc32 + 1), 'imported_visitors.csv'],
      ['fathom', 'altered.zip', withData(fathom, 'example.com/Site.csv', ',10\n', ',90\n'), 'example.com/Site.csv'],
    ];
    for (const [kind, name, zip, entry] of cases) {
      const site = await newSite(`${kind} ${name}`);
      const file = join(dir, `${kind}-${name}`);
      writeFileSync(file, zip);
      const res = await plumb(['import', kind, file, '--site', site]);
      assert.equal(res.code, 1, `${kind} ${name}: ${res.out}`);
      assert.match(res.err, new RegExp(`HTTP 400: .*${entry.replace(/\./g, '\\.')} in the zip is damaged \\(its CRC-32 is`), `${kind} ${name}`);
      assert.deepEqual(await pageviews(site), [{ pageviews: '0' }], `${kind} ${name}`);
      const list = await plumb(['import', 'list', '--site', site]);
      assert.match(list.out, new RegExp(`: failed \\(not a valid export: ${entry.replace(/\./g, '\\.')} in the zip is damaged`));
    }
  });
});
