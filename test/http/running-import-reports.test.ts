// Reports count an import's imported days only once it is done: rows a running import has written so far, and rows
// of a failed import that were not removed, count for nothing (docs/reports.md, "Imported data"). An import deleted
// while it runs stops (409) and leaves nothing.

import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ImportedDay } from '../../src/store/types.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { heldUpload } from '../helpers/held-upload.js';
import { generateUmamiExport } from '../helpers/umami-export.js';

describe('imported days of imports that are not done', () => {
  let t: TestApp;
  let site: string;
  // No sweep during the test: the running import below stands for one a live process is running.
  before(async () => {
    t = await startTestApp({ importTiming: { heartbeatMs: 100, sweepMs: 3_600_000, leaseMs: 3_600_000 } });
    site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Imports', domain: 'imports.example', timezone: 'UTC' })).body.id;
  });
  after(() => t.close());

  const pageviews = async (grouping = '') => {
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&date_from=2026-03-01&date_to=2026-03-10${grouping}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return (res.body as { pageviews: string }[]).reduce((n, r) => n + Number(r.pageviews), 0);
  };
  const days = (importId: string, pageviews: number[]): ImportedDay[] =>
    pageviews.map((n, i) => ({
      importId, siteId: site, day: `2026-03-0${i + 1}`, dimension: '', value: '', pageviews: n, visits: n, visitors: n, bounces: 0, visitDuration: 0, lacks: 0,
    }));
  const done = { status: 'done' as const, digest: 'd', imported: 3, rejected: 0, firstHitAt: new Date('2026-03-01T00:00:00Z'), lastHitAt: new Date('2026-03-03T00:00:00Z'), failure: null };

  it('counts none of a running import, all of it once done', async () => {
    const running = await t.meta.createImport({ siteId: site, kind: 'fathom', fileName: 'running.zip', visitIdBase: 0n, owner: 'a-live-process' });
    await t.events.writeImportedDays(days(running.id, [10, 20, 30]));
    assert.equal(await pageviews(), 0);
    assert.equal(await pageviews('&date_grouping=day'), 0);
    assert.ok(await t.meta.finishImport(running.id, 'a-live-process', done));
    // As the import service does when an import finishes (another process's is seen within a few seconds).
    t.doneImports.forget(site);
    assert.equal(await pageviews(), 60);
    assert.equal(await pageviews('&date_grouping=day'), 60);
  });

  it('counts none of a failed import whose rows were left, beside a done one', async () => {
    const failed = await t.meta.createImport({ siteId: site, kind: 'plausible', fileName: 'failed.zip', visitIdBase: 0n, owner: 'a-live-process' });
    await t.events.writeImportedDays(days(failed.id, [1000, 1000]));
    assert.ok(await t.meta.finishImport(failed.id, 'a-live-process', { ...done, status: 'failed', failure: 'interrupted' }));
    assert.equal(await pageviews(), 60);
    assert.equal(await pageviews('&date_grouping=day'), 60);
  });

  it('stops an import deleted while it runs, and keeps nothing of it', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const csv = generateUmamiExport({ websiteId: '94db1cb1-74f4-4a40-ad6c-962362670409', hostname: 'imports.example', start: Date.UTC(2026, 3, 1), days: 5, visitsPerDay: 100 }).csv;
    const lines = csv.split('\n');
    const cut = Math.floor(lines.length / 2);
    const upload = heldUpload(`${url}/admin/imports/umami?site_id=${site}&file_name=deleted.csv`, ADMIN_TOKEN, 'text/csv');
    try {
      await upload.write(`${lines.slice(0, cut).join('\n')}\n`);
      let running;
      for (let waited = 0; waited < 30_000 && !running; waited += 100) {
        running = (await t.meta.listImports(site)).find((i) => i.fileName === 'deleted.csv');
        if (running && (await t.events.listHits(site)).length === 0) running = undefined;
        if (!running) await sleep(100);
      }
      assert.ok(running, 'the import runs and has stored hits');
      const deleted = await t.call(ADMIN_TOKEN, 'DELETE', `/admin/imports/${running.id}`);
      assert.equal(deleted.status, 200);
      await upload.write(lines.slice(cut).join('\n'));
      const answer = await upload.end();
      assert.equal(answer.status, 409, JSON.stringify(answer.body));
      assert.match(answer.body.error, /deleted, or taken over/);
      await t.flushHits();
      assert.equal((await t.events.listHits(site)).length, 0, 'no hit of it is left');
      assert.equal((await t.meta.listImports(site)).some((i) => i.fileName === 'deleted.csv'), false);
    } finally {
      upload.destroy();
    }
  });
});
