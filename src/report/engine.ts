// Runs reports: resolves a request's time zone and range for its site, checks regular expressions with the
// database that will run them, compiles, runs through the query gate, and shapes rows as SPEC.md writes them.

import { ValidationError } from '../domain/errors.js';
import { parseTimestamp } from '../domain/time.js';
import { localToUtc, prepareOffsetSpans } from '../domain/zoned-time.js';
import type { LiveVisit } from '../domain/hits.js';
import type { EventStore, Site } from '../store/types.js';
import { ReportCompiler } from './compiler.js';
import { aggregateAlias, fieldAlias, PROP_ALIAS, TIMESTAMP_ALIAS } from './result-columns.js';
import { filledParams, type CompiledQuery } from './dialect.js';
import { currentVisitorsOf, mergeCurrentVisits } from './current-visitors.js';
import { formatAggregate } from './format.js';
import { importedAnswers, importedDaySums, importedDaysQuery, importedPlan, mergeImported, recordedPartsQuery } from './imported.js';
import { DEFAULT_GROUPED_LIMIT, EARLIEST_DATE, LATEST_DATE, type RangeEnd, type ReportRequest } from './parse.js';
import { journeyRows, journeysQuery, type JourneyOptions, type JourneyPath } from './journeys.js';
import { funnelQuery, funnelResults, type FunnelStepResult } from './funnels.js';
import type { FunnelStep } from '../store/types.js';
import type { QueryGate } from './query-gate.js';
import type { ReportQuery } from './query.js';
import { VISITORS_OVER_BOUND } from './plans/top-visitors.js';
import { recordedRowsWithRollups } from './day-rollups/recorded-rows.js';

const SECOND = 1000;
const HOUR_GROUPING_MAX_MS = 7 * 24 * 3_600_000;
const CURRENT_WINDOW_MS = 5 * 60 * 1000;
/**
 * Current visits read as rows and laid over the live ones at most; a site with more (no site this server carries)
 * is counted by SQL over the stored rows alone.
 */
export const MAX_CURRENT_ROWS = 200_000;

/**
 * The visits in progress not yet stored (embedded: the ingest thread's memory; scale-out: Redis, at most
 * MAX_CURRENT_ROWS); null where there are none to ask, or too many to lay over the rows. A source that cannot be
 * reached rejects, and the request is answered as that outage is (src/http/service-outage.ts).
 */
export type LiveVisitSource = (siteId: string, sinceMs: number) => Promise<LiveVisit[] | null>;
/** Regular expressions the database accepted, remembered so a dashboard's repeated filter costs no second query. */
const KNOWN_GOOD_PATTERNS = 1000;
/**
 * How long a site's grouping whose top groups went over their bound (plans/top-visitors.ts: few groups holding most
 * pageviews, as browsers or countries do) goes straight to the counting in slices, sparing the attempt's first pass.
 */
const OVER_BOUND_MEMORY_MS = 60 * 60 * 1000;
const OVER_BOUND_KEYS = 1000;

/** A report row: fields and timestamp as text, aggregates as decimal text (engagement ones null without data). */
export type ReportRow = Record<string, string | null>;

export interface CurrentVisitors {
  total: number;
  content?: { hostname: string; pathname: string; total: number }[];
  referrers?: { referrer_hostname: string; referrer_pathname: string; total: number }[];
}

/** A goal's completions by one custom property's value (the dashboard's goal panel). */
export interface PropertyBreakdown {
  /** Keys the goal's completions in the range carry, most used first (at most MAX_PROPERTY_KEYS). */
  keys: string[];
  /** The key broken down ('' when the completions carry none). */
  key: string;
  /** Completions of the goal in the range with the filters, with or without the key: what a share is of. */
  total: number;
  rows: { value: string; conversions: number; unique_conversions: number }[];
}

export const MAX_PROPERTY_KEYS = 100;

/** Journeys of a range: its first instant and the one after its last (UTC), its zone, and what was counted. */
export interface Journeys {
  from: Date;
  until: Date;
  timezone: string;
  totalVisits: number;
  paths: JourneyPath[];
}

/** Stored hits per slice when `visitors` are counted in slices (SqlDialect.slicesVisitors, plans/visitor-days.ts). */
export const HITS_PER_VISITOR_SLICE = 1_250_000;
export const MAX_VISITOR_SLICES = 16;

/**
 * At least how many slices grouped visitors are counted in on a store of `hits` hits: one per 1.25 M, so that a
 * slice's distinct (group, visitor) pairs stay under ~70 MiB of DuckDB's memory whatever the store's size (10 M:
 * eight, 190 MiB for top pages with visitors); one below that (no slices: one pass), where each slice's fixed cost
 * would show (a 20,000-pageview store: 9 → 17 ms of CPU in four); at most 16. The slices are UTC days of the range,
 * each cut by visitor id where the days are fewer (plans/visitor-days.ts).
 */
export const visitorSlicesFor = (hits: number): number =>
  Math.min(MAX_VISITOR_SLICES, Math.max(1, Math.ceil(hits / HITS_PER_VISITOR_SLICE)));

/** `c` on `store` as reports run: after its prelude, in the same snapshot, the prelude's row filling its parameters. */
export function runCompiled(store: Pick<EventStore, 'query' | 'queryAfter'>, c: CompiledQuery): Promise<Record<string, unknown>[]> {
  const prelude = c.prelude;
  if (!prelude) return store.query(c.sql, c.params);
  return store.queryAfter(prelude, (rows) => ({ sql: c.sql, params: filledParams(c, rows[0]) }));
}

export class ReportEngine {
  private readonly goodPatterns = new Set<string>();
  /** When each site's grouping last went over the top groups' bound (OVER_BOUND_MEMORY_MS). */
  private readonly overBound = new Map<string, number>();
  /** Recorded sums to add imported days to (ratios' parts, not ratios). */
  private readonly partsCompiler: ReportCompiler;

  constructor(
    private readonly store: EventStore,
    private readonly compiler: ReportCompiler,
    private readonly gate: QueryGate,
    private readonly now: () => Date = () => new Date(),
    /**
     * The ids of the site's finished (done) imports, whose imported days alone are counted (docs/reports.md,
     * "Imported data"); without it, every imported day is (engines over a bare event store: tests, benchmarks).
     */
    private readonly doneImports?: (siteId: string) => Promise<readonly string[]>,
    /** Slices for grouped visitors on a store of this many hits (EventStore.hitsEstimate); tests fix a number. */
    private readonly slicesFor: (hits: number) => number = visitorSlicesFor,
  ) {
    this.partsCompiler = new ReportCompiler(compiler.dialect, true, compiler.topGroupRows);
  }

  private live: LiveVisitSource | undefined;
  private dayRollupsRead = true;

  /** Current visitors count the visits in progress `source` gives too, before their rows are written. */
  useLiveVisits(source: LiveVisitSource): void {
    this.live = source;
  }

  /** Whether closed days are read from the store's day rollups where it keeps them (default: yes; tests compare). */
  readDayRollups(on: boolean): void {
    this.dayRollupsRead = on;
  }

  /** Report queries running and waiting (for /metrics). */
  get queueStats(): { running: number; queued: number } {
    return this.gate.stats;
  }

  async aggregate(request: ReportRequest, site: Site): Promise<ReportRow[]> {
    const { query, compiled } = await this.compile(request, site);
    // Imported history joins the answer for the aggregates it can answer exactly, when there is some (imported
    // days have no custom properties, nor visits' hits to walk a funnel along); the request's other aggregates
    // are recorded hits only.
    const plan = query.props?.length || query.propGroup !== undefined || query.funnel ? undefined : importedPlan(query, site);
    const counted = plan && (await this.countedImports(site.id));
    if (plan && counted) {
      const days = importedDaySums(await this.run(importedDaysQuery(this.compiler.dialect, site.id, plan, counted.ids)));
      // A number some row read lacks (an export without it: Fathom's visitors) is left to recorded hits alone.
      const answers = days.length > 0 ? importedAnswers(plan, days) : undefined;
      if (answers?.size) {
        const parts = recordedPartsQuery(query);
        const recorded = (await this.withDayRollups(parts)) ?? (await this.run(this.partsCompiler.aggregation(parts)));
        return mergeImported(query, recorded, days, answers);
      }
    }
    // Closed days from their rollups (ClickHouse), summed with the rest of the range's hits as imported days are.
    const recorded = await this.withDayRollups(recordedPartsQuery(query));
    if (recorded) return mergeImported(query, recorded, [], new Set(query.aggregates));
    const rows = await this.runBounded(query, compiled);
    return rows.map((row) => this.shape(query, row));
  }

  /** The recorded rows of parts query `q` with closed days read from day rollups, or undefined where none answers. */
  private async withDayRollups(q: ReportQuery): Promise<Record<string, unknown>[] | undefined> {
    const rollups = this.store.dayRollups;
    if (!rollups || !this.dayRollupsRead) return undefined;
    return recordedRowsWithRollups(q, {
      rollups: {
        validBuilds: (...a) => this.gate.run(() => rollups.validBuilds(...a)),
        sums: (...a) => this.gate.run(() => rollups.sums(...a)),
      },
      dialect: this.partsCompiler.dialect,
      compile: (part) => this.partsCompiler.aggregation(part),
      run: (c) => this.run(c),
    });
  }

  /**
   * A report that may count its top groups' visitors in one bounded pass (CompiledQuery.fallback): past the bound
   * the statement fails before counting and its fallback answers, and the same site and grouping go to the
   * fallback directly for a while.
   */
  private async runBounded(q: ReportQuery, c: CompiledQuery): Promise<Record<string, unknown>[]> {
    if (!c.fallback) return this.run(c);
    const key = `${q.siteId} ${q.fieldGrouping.join(',')} ${q.dateGrouping ?? ''}`;
    const now = this.now().getTime();
    const since = this.overBound.get(key);
    if (since !== undefined && now - since < OVER_BOUND_MEMORY_MS) return this.run(c.fallback);
    try {
      return await this.run(c);
    } catch (err) {
      if (!(err instanceof Error && err.message.includes(VISITORS_OVER_BOUND))) throw err;
      if (this.overBound.size >= OVER_BOUND_KEYS) this.overBound.clear();
      this.overBound.set(key, now);
      return this.run(c.fallback);
    }
  }

  /**
   * Whether the site has imported days to count, and of which imports (undefined: all); false for most sites,
   * which never imported, at the cost of no query (hasImportedDays is remembered), and for sites whose imports
   * are none of them done.
   */
  private async countedImports(siteId: string): Promise<{ ids: readonly string[] | undefined } | false> {
    if (!(await this.gate.run(() => this.store.hasImportedDays(siteId)))) return false;
    const ids = await this.doneImports?.(siteId);
    return ids?.length === 0 ? false : { ids };
  }

  /** The resolved query and its SQL, after checking its regular expressions (also used by the benchmark). */
  async compile(request: ReportRequest, site: Site): Promise<{ query: ReportQuery; compiled: CompiledQuery }> {
    const query = await this.resolve(request, site);
    for (const f of query.filters) {
      if (f.operator === 'matching' || f.operator === 'not matching') await this.checkRegex(f.value);
    }
    return { query, compiled: this.compiler.aggregation(query) };
  }

  /**
   * A goal's completions by the value of custom property `key` (or of the most used key when `key` is not among
   * those the completions carry), with the request's range and filters: conversions and unique conversions per
   * value, most first, at most `limit` values.
   */
  async propertyBreakdown(request: ReportRequest, site: Site, key: string | undefined, limit: number): Promise<PropertyBreakdown> {
    if (request.entity !== 'event') throw ValidationError.of('entity', 'must be event');
    const query = await this.resolve({ ...request, aggregates: ['conversions', 'unique_conversions'], fieldGrouping: [] }, site);
    for (const f of query.filters) {
      if (f.operator === 'matching' || f.operator === 'not matching') await this.checkRegex(f.value);
    }
    const keys = (await this.run(this.compiler.propertyKeys(query, MAX_PROPERTY_KEYS))).map((r) => String(r.k));
    const chosen = key !== undefined && keys.includes(key) ? key : (keys[0] ?? '');
    const [totals] = await this.run(this.compiler.aggregation({ ...query, aggregates: ['conversions'] }));
    const total = Number(totals?.[aggregateAlias('conversions')] ?? 0);
    if (chosen === '') return { keys, key: '', total, rows: [] };
    const rows = await this.run(
      this.compiler.aggregation({ ...query, propGroup: chosen, sort: { field: 'conversions', direction: 'desc' }, limit }),
    );
    return {
      keys,
      key: chosen,
      total,
      rows: rows.map((r) => ({
        value: String(r[PROP_ALIAS] ?? ''),
        conversions: Number(r[aggregateAlias('conversions')] ?? 0),
        unique_conversions: Number(r[aggregateAlias('unique_conversions')] ?? 0),
      })),
    };
  }

  /**
   * Journeys (docs/reports.md, "Journeys") over the request's range, zone and filters: the resolved range and
   * the most frequent page prefixes of each depth. Recorded pageviews only (imported days have no visits' pages).
   */
  async journeys(request: ReportRequest, site: Site, options: JourneyOptions): Promise<Journeys> {
    const query = await this.resolve({ ...request, entity: 'pageview', aggregates: ['visits'], fieldGrouping: [] }, site);
    for (const f of query.filters) {
      if (f.operator === 'matching' || f.operator === 'not matching') await this.checkRegex(f.value);
    }
    const { totalVisits, paths } = journeyRows(await this.run(journeysQuery(this.compiler.dialect, query, options)));
    return { from: query.from, until: query.until, timezone: query.timezone, totalVisits, paths };
  }

  /**
   * A funnel (docs/reports.md, "Funnels") over the request's range, zone and filters: the resolved range and each
   * step's numbers. Recorded hits only (imported days have no visits' hits).
   */
  async funnel(request: ReportRequest, site: Site, steps: readonly FunnelStep[]): Promise<{ from: Date; until: Date; timezone: string; steps: FunnelStepResult[] }> {
    const query = await this.resolve({ ...request, entity: 'pageview', aggregates: ['visits'], fieldGrouping: [] }, site);
    for (const f of query.filters) {
      if (f.operator === 'matching' || f.operator === 'not matching') await this.checkRegex(f.value);
    }
    const [row] = await this.run(funnelQuery(this.compiler.dialect, query, steps));
    return { from: query.from, until: query.until, timezone: query.timezone, steps: funnelResults(row, steps) };
  }

  async currentVisitors(siteId: string, detailed: boolean): Promise<CurrentVisitors> {
    const since = new Date(this.now().getTime() - CURRENT_WINDOW_MS);
    const live = this.live ? await this.live(siteId, since.getTime()) : null;
    if (live) {
      const stored = await this.run(this.compiler.currentVisitRows(siteId, since, MAX_CURRENT_ROWS + 1));
      if (stored.length <= MAX_CURRENT_ROWS) return currentVisitorsOf(mergeCurrentVisits(stored, live), detailed);
    }
    const q = this.compiler.currentVisitors(siteId, since);
    const run = (c: CompiledQuery) => this.run(c);
    const [total] = await run(q.total);
    const result: CurrentVisitors = { total: Number(total?.total ?? 0) };
    if (!detailed) return result;
    const [content, referrers] = await Promise.all([run(q.content), run(q.referrers)]);
    result.content = content.map((r) => ({ hostname: String(r.hostname), pathname: String(r.pathname), total: Number(r.total) }));
    result.referrers = referrers.map((r) => ({
      referrer_hostname: String(r.referrer_hostname),
      referrer_pathname: String(r.referrer_pathname),
      total: Number(r.total),
    }));
    return result;
  }

  /**
   * Time zone, range and defaults of docs/reports.md applied to a validated request. The range is whole seconds
   * from date_from to the end of date_to's second. Defaults stay within the accepted dates of the reporting zone,
   * whatever the data: a first hit before them (imported) starts the range at the earliest.
   */
  private async resolve(r: ReportRequest, site: Site): Promise<ReportQuery> {
    const timezone = r.timezone ?? site.timezone;
    const utc = (end: RangeEnd) => (end.kind === 'instant' ? end.at : localToUtc(timezone, end.local));
    const earliest = localToUtc(timezone, parseTimestamp(EARLIEST_DATE)!.getTime());
    const end = localToUtc(timezone, parseTimestamp(LATEST_DATE)!.getTime()) + SECOND;
    const bounded = (t: number) => Math.min(Math.max(t, earliest), end);
    let from: number;
    if (r.dateFrom) from = utc(r.dateFrom);
    else {
      const [row] = await this.run(this.compiler.firstHit(site.id, r.entity, r.eventName));
      const at = row?.first;
      from = at instanceof Date ? at.getTime() : typeof at === 'string' ? Date.parse(`${at.replace(' ', 'T')}Z`) : this.now().getTime();
      from = bounded(Number.isNaN(from) ? this.now().getTime() : from);
    }
    const until = r.dateTo ? utc(r.dateTo) + SECOND : bounded(this.now().getTime() + 1);
    if (r.dateFrom && from > until - SECOND) throw ValidationError.of('date_from', 'must not be after date_to (default: now)');
    if (r.dateGrouping === 'hour' && until - SECOND - from > HOUR_GROUPING_MAX_MS) {
      throw ValidationError.of('date_grouping', 'hour is only available for ranges of up to 7 days');
    }
    // The zone's offsets over a long range are found a year per event-loop turn, before the compiler needs them.
    if (r.dateGrouping) await prepareOffsetSpans(timezone, from, Math.max(until, from));
    const limit = r.limit ?? (r.fieldGrouping.length > 0 ? DEFAULT_GROUPED_LIMIT : undefined);
    return {
      entity: r.entity,
      siteId: site.id,
      ...(r.eventName !== undefined ? { eventName: r.eventName } : {}),
      aggregates: r.aggregates,
      ...(r.dateGrouping ? { dateGrouping: r.dateGrouping } : {}),
      fieldGrouping: r.fieldGrouping,
      filters: r.filters,
      sort: r.sort ?? (r.dateGrouping ? { field: 'timestamp', direction: 'asc' } : { field: r.aggregates[0]!, direction: 'desc' }),
      from: new Date(from),
      until: new Date(Math.max(until, from)),
      timezone,
      ...(limit !== undefined ? { limit } : {}),
      ...(r.props?.length ? { props: r.props } : {}),
      ...(r.funnel ? { funnel: r.funnel } : {}),
      ...(r.aggregates.includes('visitors') ? { visitorSlices: await this.visitorSlices() } : {}),
    };
  }

  /** How many slices grouped visitors are counted in: by the store's size where the dialect slices, else one. */
  private async visitorSlices(): Promise<number> {
    if (!this.compiler.dialect.slicesVisitors || !this.store.hitsEstimate) return 1;
    return this.slicesFor(await this.store.hitsEstimate());
  }

  private async checkRegex(pattern: string): Promise<void> {
    if (this.goodPatterns.has(pattern)) return;
    try {
      await this.run(this.compiler.regexCheck(pattern));
      if (this.goodPatterns.size >= KNOWN_GOOD_PATTERNS) this.goodPatterns.clear();
      this.goodPatterns.add(pattern);
    } catch (err) {
      if (err instanceof ValidationError || (err as { status?: number }).status === 503) throw err;
      throw ValidationError.of('filters', `"${pattern.slice(0, 100)}" is not a valid regular expression`);
    }
  }

  /** Every query reaches the store through the gate. */
  private run(c: CompiledQuery): Promise<Record<string, unknown>[]> {
    return this.gate.run(() => runCompiled(this.store, c));
  }

  private shape(q: ReportQuery, row: Record<string, unknown>): ReportRow {
    const out: ReportRow = {};
    q.fieldGrouping.forEach((f, i) => (out[f] = String(row[fieldAlias(i)] ?? '')));
    if (q.dateGrouping) out.timestamp = String(row[TIMESTAMP_ALIAS]);
    for (const a of q.aggregates) out[a] = formatAggregate(a, row[aggregateAlias(a)]);
    return out;
  }
}
