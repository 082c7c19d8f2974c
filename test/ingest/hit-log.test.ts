// The hit log keeps every accepted hit whole until the store confirms it, custom properties included: what a
// restart replays is exactly what was appended.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { VisitRecord } from '../../src/domain/hits.js';
import { HitLog } from '../../src/ingest/hit-log.js';
import { storedHit } from '../helpers/stored-hits.js';

const visitOf = (siteId: string, visitId: bigint, at: Date): VisitRecord => ({
  siteId, visitId, visitorId: 7n, startedAt: at, lastSeenAt: at, entryPage: '/a', exitPage: '/a', exitHostname: 'https://example.com',
  pageviews: 1, events: 1, pathsExact: true, referrerHostname: '', referrerPathname: '', referrerSource: '', utmCampaign: '',
  utmContent: '', utmMedium: '', utmSource: '', utmTerm: '', ref: '', keyword: '',
});

describe('hit log', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-hitlog-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('replays unconfirmed hits with their custom properties, hostile keys and values included', async () => {
    const hits = [
      storedHit('S', '2026-03-01T00:00:00Z', {
        type: 'event', eventName: 'Signup', value: 500,
        props: [['plan', 'pro'], ['__proto__', '{"polluted":true}'], ['constructor', 'x'], ['ü 😀', "it's \\ \n\u0000"]],
      }),
      storedHit('S', '2026-03-01T00:00:01Z'),
    ];
    const { log } = await HitLog.open(dir, 0, { sync: false });
    for (const h of hits) await log.append(h, visitOf('S', h.visitId, h.timestamp));
    await log.close();

    const { log: reopened, unconfirmed } = await HitLog.open(dir, 0, { sync: false });
    await reopened.close();
    assert.deepEqual(unconfirmed.map((r) => r.hit), hits);
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype was touched');
  });
});
