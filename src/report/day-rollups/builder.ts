// Builds day rollups: every round, each closed UTC day of a site whose counts of inserted and deleted hits match no
// build gets one, made of the report compiler's own answers for that day (pageviews and visitors, and the visits,
// bounces, durations and page pairs of the visits lying wholly inside the day, the totals, per value of every
// hit field and per UTC hour), with the ids of the day's other visits, so a build holds what the hits answer. Any
// number of processes may build: two builds of one day made from the same counts hold the same numbers, and readers
// take the newest.

import { utcDay, utcDayStart } from '../../domain/time.js';
import { HOUR_FIELD, type DayChanges, type DayRollupRow, type DayRollupStore } from '../../store/types.js';
import type { Aggregate } from '../fields.js';
import { ReportCompiler } from '../compiler.js';
import { DAY_MS, type CompiledQuery } from '../dialect.js';
import type { ReportQuery, VisitSet } from '../query.js';
import { aggregateAlias, fieldAlias, TIMESTAMP_ALIAS } from '../result-columns.js';
import { integer } from '../imported.js';
import { crossingBounds, type CrossingVisit } from './days.js';
import { ROLLUP_FIELDS, VISIT_AGGREGATES } from './recorded-rows.js';

/** A UTC day is built once it has been over this long (hits still in a process's write buffer have arrived). */
export const CLOSED_AFTER_MS = 60 * 60_000;
/** Days built per round at most, newest first (a round must not hold the database for long). */
const DAYS_PER_ROUND = 50;
/**
 * Crossing visits named in a build's statements at most (about 20 bytes each, twice in a statement: ClickHouse
 * parses up to 256 KiB of one by default). About one in a thousand of a day's visits cross a midnight: 1,600 at
 * 3.3 M pageviews a day.
 */
const INLINE_CROSSINGS = 5_000;
/** How often the counts are checked against every day's hits (days stored before the counts existed get theirs). */
const HEAL_EVERY_MS = 6 * 60 * 60_000;

export interface DayRollupBuilderDeps {
  rollups: DayRollupStore;
  /** A compiler of the store's dialect. */
  compiler: ReportCompiler;
  /** How report statements run (the engine's gate), so builds queue behind requests like any report. */
  run: (c: CompiledQuery) => Promise<Record<string, unknown>[]>;
  now?: () => Date;
  /** Crossing visits named in a build's statements at most (default INLINE_CROSSINGS). */
  inlineCrossings?: number;
  log: (err: unknown, message: string) => void;
  info?: (fields: Record<string, unknown>, message: string) => void;
}

export class DayRollupBuilder {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private healedAt = Number.NEGATIVE_INFINITY;
  private closed = false;

  /** The compiler of the deps' dialect in parts mode: bounced visits and durations as sums, which subtract. */
  private readonly parts: ReportCompiler;

  constructor(private readonly deps: DayRollupBuilderDeps) {
    this.parts = new ReportCompiler(deps.compiler.dialect, true, deps.compiler.topGroupRows);
  }

  /**
   * Rounds about every `intervalMs`, the first after `firstMs`, each delayed by up to a fifth more at random:
   * processes started together drift apart, so two rarely mend one day's counts at the same instant (both would
   * add the difference; the next round mends the day again).
   */
  start(intervalMs = 10 * 60_000, firstMs = 60_000): void {
    const next = (ms: number) => {
      this.timer = setTimeout(() => {
        this.running = this.runOnce()
          .catch((err: unknown) => this.deps.log(err, 'day rollups: a round failed'))
          .finally(() => {
            this.running = undefined;
            if (!this.closed) next(intervalMs);
          });
      }, ms * (1 + Math.random() / 5));
      this.timer.unref();
    };
    next(firstMs);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One round: counts mended where due, then up to DAYS_PER_ROUND closed days built; returns what it did. */
  async runOnce(): Promise<{ healed: number; built: number }> {
    const now = (this.deps.now ?? (() => new Date()))().getTime();
    const rollups = this.deps.rollups;
    let healed = 0;
    if (now - this.healedAt >= HEAL_EVERY_MS) {
      healed = await rollups.heal();
      this.healedAt = now;
    }
    let built = 0;
    for (const { siteId, day } of await rollups.daysToBuild(utcDay(now - CLOSED_AFTER_MS), DAYS_PER_ROUND)) {
      if (await this.buildDay(siteId, day, now)) built += 1;
    }
    if (healed + built > 0) this.deps.info?.({ healed, built }, 'day rollups built');
    return { healed, built };
  }

  /**
   * Builds one day from its hits; false when its counts do not tell its hits (they are mended, for the next round).
   * The counts are read first: a hit arriving during the build changes them, so the build is never read.
   */
  async buildDay(siteId: string, day: string, builtAt: number): Promise<boolean> {
    const rollups = this.deps.rollups;
    const { hits, ...counts } = await rollups.changes(siteId, day);
    const net = counts.inserted - counts.deleted;
    if (net !== hits) {
      const mend: DayChanges = hits > net ? { inserted: hits - net, deleted: 0n } : { inserted: 0n, deleted: net - hits };
      await rollups.addChanges(siteId, day, mend);
      return false;
    }
    const start = utcDayStart(day);
    const end = start + DAY_MS;
    const crossings = await this.crossings(siteId, start, end);
    const bounds = crossingBounds(start, end, crossings);
    // The crossing visits are left out of the contained visits' sums: named in the statements when few enough
    // (they are read once, and each statement then reads only the day's hits), else found again by each.
    const dayRange = [new Date(start), new Date(end)] as const;
    const inline = crossings.length <= (this.deps.inlineCrossings ?? INLINE_CROSSINGS);
    const except: VisitSet = inline ? { ids: crossings.map((c) => c.visitId) } : { edgesOf: dayRange };
    const rows: DayRollupRow[] = [];
    // Each hit field's values, the totals (''), and the day's UTC hours (HOUR_FIELD: the totals by hour).
    for (const field of ['', ...ROLLUP_FIELDS, HOUR_FIELD] as const) {
      const q: ReportQuery = {
        entity: 'pageview',
        siteId,
        aggregates: ['pageviews', 'visitors'],
        fieldGrouping: field === '' || field === HOUR_FIELD ? [] : [field],
        ...(field === HOUR_FIELD ? { dateGrouping: 'hour' as const } : {}),
        filters: [],
        sort: { field: 'pageviews', direction: 'desc' },
        from: new Date(start),
        until: new Date(end),
        timezone: 'UTC',
      };
      // Pageviews and visitors as a report of them reads the day; the visit sums of the visits with a pageview in
      // the day (or hour) and no hit outside the day (the contained visits), which add up over days (a visit
      // counts in each hour it has a pageview in, as reports by hour count it), their facts from their hits.
      const contained: ReportQuery = { ...q, aggregates: [...VISIT_AGGREGATES], sort: { field: 'visits', direction: 'desc' }, scope: { intervals: [dayRange], except, factsFromHits: 'all' } };
      const [counted, visits] = await Promise.all([this.byValue(q), this.byValue(contained)]);
      for (const value of new Set([...counted.keys(), ...visits.keys()])) {
        const read = (from: Map<string, Record<string, unknown>>, a: Aggregate) => integer(from.get(value)?.[aggregateAlias(a)]);
        rows.push({
          field,
          value,
          pageviews: read(counted, 'pageviews'),
          visitors: read(counted, 'visitors'),
          visits: read(visits, 'visits'),
          // Parts mode: bounced visits and durations in ms (ReportCompiler).
          bounces: read(visits, 'bounce_rate'),
          durationMs: read(visits, 'avg_duration'),
          uniques: read(visits, 'uniques'),
        });
      }
    }
    if (!rows.some((r) => r.field === '')) rows.push({ field: '', value: '', pageviews: 0n, visitors: 0n, visits: 0n, bounces: 0n, durationMs: 0n, uniques: 0n });
    await rollups.insertBuild(siteId, day, builtAt, counts, rows, { visitIds: crossings.map((c) => c.visitId), ...bounds });
    return true;
  }

  /** A part of a day's build: the rows of `q` by the value of its field or its hour ('' without either). */
  private async byValue(q: ReportQuery): Promise<Map<string, Record<string, unknown>>> {
    const rows = await this.deps.run(this.parts.aggregation(q));
    const key = q.dateGrouping ? TIMESTAMP_ALIAS : q.fieldGrouping.length > 0 ? fieldAlias(0) : undefined;
    return new Map(rows.map((row) => [key === undefined ? '' : String(row[key] ?? ''), row]));
  }

  /** The day's crossing visits: those with pageviews in it that are not wholly inside it. */
  private async crossings(siteId: string, start: number, end: number): Promise<CrossingVisit[]> {
    const rows = await this.deps.run(this.parts.crossingVisits(siteId, new Date(start), new Date(end)));
    return rows.map((r) => ({ visitId: integer(r.visit_id), startedMs: Number(integer(r.started_ms)), lastSeenMs: Number(integer(r.last_seen_ms)) }));
  }
}
