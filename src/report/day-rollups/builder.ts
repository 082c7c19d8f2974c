// Builds day rollups: every round, each closed UTC day of a site whose counts of inserted and deleted hits match no
// build gets one, made of the report compiler's own answers for that day (pageviews and visitors, the totals and per
// value of every hit field), so a build holds what the hits answer. Any number of processes may build: two builds
// of one day made from the same counts hold the same numbers, and readers take the newest.

import { utcDay, utcDayStart } from '../../domain/time.js';
import type { DayChanges, DayRollupRow, DayRollupStore } from '../../store/types.js';
import type { ReportCompiler } from '../compiler.js';
import { DAY_MS, type CompiledQuery } from '../dialect.js';
import type { ReportQuery } from '../query.js';
import { aggregateAlias, fieldAlias } from '../result-columns.js';
import { integer } from '../imported.js';
import { ROLLUP_FIELDS } from './recorded-rows.js';

/** A UTC day is built once it has been over this long (hits still in a process's write buffer have arrived). */
export const CLOSED_AFTER_MS = 60 * 60_000;
/** Days built per round at most, newest first (a round must not hold the database for long). */
const DAYS_PER_ROUND = 50;
/** How often the counts are checked against every day's hits (days stored before the counts existed get theirs). */
const HEAL_EVERY_MS = 6 * 60 * 60_000;

export interface DayRollupBuilderDeps {
  rollups: DayRollupStore;
  /** A compiler of the store's dialect. */
  compiler: ReportCompiler;
  /** How report statements run (the engine's gate), so builds queue behind requests like any report. */
  run: (c: CompiledQuery) => Promise<Record<string, unknown>[]>;
  now?: () => Date;
  log: (err: unknown, message: string) => void;
  info?: (fields: Record<string, unknown>, message: string) => void;
}

export class DayRollupBuilder {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private healedAt = Number.NEGATIVE_INFINITY;
  private closed = false;

  constructor(private readonly deps: DayRollupBuilderDeps) {}

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
    const rows: DayRollupRow[] = [];
    for (const field of ['', ...ROLLUP_FIELDS] as const) {
      const q: ReportQuery = {
        entity: 'pageview',
        siteId,
        aggregates: ['pageviews', 'visitors'],
        fieldGrouping: field === '' ? [] : [field],
        filters: [],
        sort: { field: 'pageviews', direction: 'desc' },
        from: new Date(start),
        until: new Date(start + DAY_MS),
        timezone: 'UTC',
      };
      for (const row of await this.deps.run(this.deps.compiler.aggregation(q))) {
        rows.push({
          field,
          value: field === '' ? '' : String(row[fieldAlias(0)] ?? ''),
          pageviews: integer(row[aggregateAlias('pageviews')]),
          visitors: integer(row[aggregateAlias('visitors')]),
        });
      }
    }
    if (!rows.some((r) => r.field === '')) rows.push({ field: '', value: '', pageviews: 0n, visitors: 0n });
    await rollups.insertBuild(siteId, day, builtAt, counts, rows);
    return true;
  }
}
