// A report narrowed to some of its range's hits (ReportQuery.scope): the condition plans 1-3 and the typed hits
// add to their selection. Day rollups (src/report/day-rollups/) use it to read from the hits only what their builds
// do not hold: the range's days without a build, and the hits of visits crossing a built day's midnight.

import type { Binder, SqlDialect } from '../dialect.js';
import type { HitScope, VisitSet } from '../query.js';

/** `[from, until)` of `h.ts` as SQL. */
function within(b: Binder, [from, until]: readonly [Date, Date]): string {
  return `(h.ts >= ${b.value(from)} AND h.ts < ${b.value(until)})`;
}

/** `SELECT` of the visit ids `visits` names. */
function visitIds(d: SqlDialect, visits: VisitSet, site: string, b: Binder): string {
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
    parts.push(scope.except ? `((${times}) AND h.visit_id NOT IN (${visitIds(d, scope.except, site, b)}))` : `(${times})`);
  }
  const crossing = scope.crossing;
  if (crossing && crossing.windows.length > 0) {
    parts.push(`((${crossing.windows.map((w) => within(b, w)).join(' OR ')}) AND h.visit_id IN (${visitIds(d, crossing.visits, site, b)}))`);
  }
  // No interval and no window: no hit.
  return [parts.length > 0 ? `(${parts.join(' OR ')})` : '1 = 0'];
}
