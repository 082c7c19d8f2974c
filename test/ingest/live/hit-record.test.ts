// A hit-log record gives back exactly the hit and the visit it was made of, whether the visit shares the hit's site
// and attribution (as every live hit's does) or not, and records written by earlier versions still read.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ATTRIBUTION_FIELDS, attributionOf, type StoredHit, type VisitRecord } from '../../../src/domain/hits.js';
import { decodeRecord, encodeRecord, RECORD_FIELDS } from '../../../src/ingest/live/hit-record.js';
import { storedHit } from '../../helpers/stored-hits.js';

/** The visit of `hit` as the live pipeline makes it: the hit's site, visit id, visitor and attribution. */
const visitOf = (hit: StoredHit, overrides: Partial<VisitRecord> = {}): VisitRecord => ({
  siteId: hit.siteId,
  visitId: hit.visitId,
  visitorId: hit.visitorId,
  startedAt: new Date(hit.timestamp.getTime() - 60_000),
  lastSeenAt: hit.timestamp,
  entryPage: '/entry',
  exitPage: hit.pathname,
  exitHostname: hit.hostname,
  pageviews: 3,
  events: 1,
  pathsExact: true,
  journeyLength: 6,
  journeyPages: ['/b', '/c, "quoted"', '/d\nline', '/e'],
  ...attributionOf(hit),
  ...overrides,
});

const valuesOf = (line: string) => JSON.parse(line) as unknown[];
const at = (line: string, field: string) => valuesOf(line)[RECORD_FIELDS.indexOf(field)];

describe('hit-log records', () => {
  it('leave the visit\'s site, id, visitor and attribution null where the hit has the same, and read them back from the hit', () => {
    const hit = storedHit('SITE', '2026-03-01T10:00:00Z', { props: [['plan', 'pro'], ['ü 😀', "it's \\ \n\u0000"]] });
    const visit = visitOf(hit);
    const line = encodeRecord(42, hit, visit);
    assert.ok(line.endsWith('\n') && !line.slice(0, -1).includes('\n'), 'one line');
    assert.ok(!line.includes('\u0000'), 'no zero byte (the log ends at its first one)');
    assert.equal(valuesOf(line).length, RECORD_FIELDS.length);
    for (const f of ['siteId', 'visitId', 'visitorId', ...ATTRIBUTION_FIELDS]) assert.equal(at(line, `visit.${f}`), null, f);
    assert.equal(at(line, 'hit.referrerSource'), 'Google');
    assert.deepEqual(decodeRecord(line), { seq: 42, hit, visit });
  });

  it('keep whatever of the visit differs from the hit: its site, attribution fields, id and visitor', () => {
    const hit = storedHit('SITE', '2026-03-01T10:00:00Z', { type: 'event', eventName: 'Signup', value: 990, firstView: false });
    const visit = visitOf(hit, {
      siteId: 'OTHER',
      visitId: 18_446_744_073_709_551_615n,
      visitorId: 5n,
      referrerSource: '',
      utmCampaign: 'spring "sale"',
      keyword: 'ü',
      entryPage: '',
      pathsExact: false,
    });
    const line = encodeRecord(7, hit, visit);
    assert.deepEqual(decodeRecord(line), { seq: 7, hit, visit });
    assert.equal(at(line, 'visit.visitId'), '18446744073709551615');
    assert.equal(at(line, 'visit.referrerSource'), '');
    assert.equal(at(line, 'visit.referrerHostname'), null);
  });

  it('read array records written before journeys (and before engagement): the journey not known', () => {
    const hit = storedHit('SITE', '2026-03-01T10:00:00Z');
    const values = valuesOf(encodeRecord(1, hit, visitOf(hit)));
    const journeyFields = RECORD_FIELDS.filter((f) => f.startsWith('visit.journey')).length;
    assert.equal(journeyFields, 5);
    for (const cut of [journeyFields, journeyFields + 2]) {
      const decoded = decodeRecord(JSON.stringify(values.slice(0, -cut)));
      assert.deepEqual(decoded.visit, visitOf(hit, { journeyLength: 0, journeyPages: [] }), `${cut} values fewer`);
    }
    // A journey shorter than five pages leaves the rest null.
    const short = encodeRecord(1, hit, visitOf(hit, { journeyLength: 2, journeyPages: ['/b'] }));
    assert.deepEqual(valuesOf(short).slice(-5), [2, '/b', null, null, null]);
    assert.deepEqual(decodeRecord(short).visit.journeyPages, ['/b']);
  });

  it('refuse a line with too few or too many values', () => {
    const hit = storedHit('SITE', '2026-03-01T10:00:00Z');
    const values = valuesOf(encodeRecord(1, hit, visitOf(hit)));
    assert.throws(() => decodeRecord(JSON.stringify(values.slice(0, -1))), /values/);
    assert.throws(() => decodeRecord(JSON.stringify([...values, null])), /values/);
  });

  it('read the object records of earlier versions, and the oldest with only a referrer', () => {
    const hit = storedHit('SITE', '2026-03-01T10:00:00Z');
    // Journeys came after object records: not known.
    const visit = visitOf(hit, { referrerSource: 'Old', utmSource: '', journeyLength: 0, journeyPages: [] });
    const h = { ...hit, timestamp: hit.timestamp.getTime(), visitorId: String(hit.visitorId), visitId: String(hit.visitId) };
    const v = {
      ...visit,
      startedAt: visit.startedAt.getTime(),
      lastSeenAt: visit.lastSeenAt.getTime(),
      visitorId: String(visit.visitorId),
      visitId: String(visit.visitId),
    };
    assert.deepEqual(decodeRecord(JSON.stringify({ s: 3, h, v })), { seq: 3, hit, visit });

    // Before visits carried their attribution: one referrer field, the rest read as '' (not the hit's).
    const oldest = { ...v } as Record<string, unknown>;
    for (const f of ATTRIBUTION_FIELDS) delete oldest[f];
    oldest.referrer = 'https://old.example/';
    const decoded = decodeRecord(JSON.stringify({ s: 4, h, v: oldest })).visit;
    for (const f of ATTRIBUTION_FIELDS) assert.equal(decoded[f], '', f);
    assert.equal(decoded.siteId, 'SITE');
    assert.equal(decoded.visitId, visit.visitId);
  });
});
