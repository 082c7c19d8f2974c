// A report narrowed to some of its range's hits (ReportQuery.scope): the condition plans 1-3 and the typed hits
// add to their selection. Day rollups (src/report/day-rollups/) use it to read from the hits only what their builds
// do not hold: the range's days without a build, and the hits of visits crossing a built day's midnight.

import type { Binder, SqlDialect } from '../dialect.js';
import type { HitScope, VisitSet } from '../query.js';

/** `[from, until)` of `h.ts` as SQL. */
function within(b: Binder, [from, until]: readonly [Date, Date]): string {
  return `(h.ts >= ${b.value(from)} AND h.ts < ${b.value(until)})`;
}

/** Whether `visits` names no visit by listing none. */
const listsNone = (visits: VisitSet) => 'ids' in visits && visits.ids.length === 0;

/** The visit ids `visits` names, for an IN: a SELECT, or the ids themselves (at least one). */
function visitIds(d: SqlDialect, visits: VisitSet, site: string, b: Binder): string {
  if ('ids' in visits) return visits.ids.map((id) => b.value(id)).join(', ');
  if ('edgesOf' in visits) return d.edgeVisitIds(site, b.value(visits.edgesOf[0]), b.value(visits.edgesOf[1]), []);
  return d.dayRollupCrossings(site, visits.builds.map((k) => `(${d.date(b.value(k.day))}, ${b.value(k.builtAt)}, ${b.value(k.inserted)}, ${b.value(k.deleted)})`));
}

/**
 * The condition on `h` keeping the hits `scope` counts, or none without a scope. The windows bound the crossing
 * visits' hits in time as well as by visit, so the database reads the hits near those midnights only.
 */
export function scopeConditions(d: SqlDialect, scope: HitScope | undefined, site: string, b: Binder): string[] {
  if (scope === undefined) return [];
  const parts: string[] = [];
  if (scope.intervals.length > 0) {
    const times = scope.intervals.map((i) => within(b, i)).join(' OR ');
    const except = scope.except && !listsNone(scope.except) ? scope.except : undefined;
    parts.push(except ? `((${times}) AND h.visit_id NOT IN (${visitIds(d, except, site, b)}))` : `(${times})`);
  }
  const crossing = scope.crossing;
  if (crossing && crossing.windows.length > 0 && !listsNone(crossing.visits)) {
    parts.push(`((${crossing.windows.map((w) => within(b, w)).join(' OR ')}) AND h.visit_id IN (${visitIds(d, crossing.visits, site, b)}))`);
  }
  // No interval and no window: no hit.
  return [parts.length > 0 ? `(${parts.join(' OR ')})` : '1 = 0'];
}

/**
 * With `scope.factsFromHits`, the facts the plans read from a visit's row (`visit_id`, `pageviews`, `started_at`,
 * `last_seen_at`) for every visit the scope keeps: taken from its hits in the scope, as the ingest derives the row
 * from them (engagement hits change no visit), and, with 'inside', from the rows of the visits crossing the range's
 * ends, whose other hits the scope does not hold. Undefined without.
 */
export function scopedVisitFacts(d: SqlDialect, scope: HitScope | undefined, site: string, range: { from: string; until: string }, b: Binder): string | undefined {
  if (!scope?.factsFromHits) return undefined;
  const fromHits =
    `SELECT h.visit_id AS visit_id, sum(CASE WHEN h.type = 'pageview' THEN 1 ELSE 0 END) AS pageviews, min(h.ts) AS started_at, max(h.ts) AS last_seen_at ` +
    `FROM ${d.table('hits', 'h')} WHERE h.site_id = ${site} AND h.type IN ('pageview', 'event') AND ${scopeConditions(d, scope, site, b).join(' AND ')} GROUP BY h.visit_id`;
  if (scope.factsFromHits === 'all') return fromHits;
  const edge = d.edgeVisitIds(site, range.from, range.until, []);
  return (
    `SELECT f.visit_id AS visit_id, f.pageviews AS pageviews, f.started_at AS started_at, f.last_seen_at AS last_seen_at FROM (${fromHits}) f WHERE f.visit_id NOT IN (${edge}) ` +
    `UNION ALL ${d.visitIds(site, [`v.visit_id IN (${edge})`], 'v.visit_id AS visit_id, v.pageviews AS pageviews, v.started_at AS started_at, v.last_seen_at AS last_seen_at')}`
  );
}
