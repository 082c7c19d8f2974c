// Daily visitor salts (DESIGN.md section 6): random, one per UTC day, the previous day's kept only to continue
// visits across midnight, anything older deleted.

import { randomBytes } from 'node:crypto';
import { utcDay, utcDayStart } from '../domain/time.js';
import type { MetaStore } from '../store/types.js';

/** The part of the MetaStore that keeps salts (the ingest thread reaches it by message). */
export type SaltStore = Pick<MetaStore, 'saltForDay' | 'findSalt' | 'deleteSaltsBefore'>;

export interface DaySalts {
  /** The salt of the hit's UTC day. */
  current: string;
  /** The previous day's salt, when it still exists. */
  previous: string | undefined;
}

export interface SaltSource {
  saltsFor(at: Date): Promise<DaySalts>;
}

const DAY_MS = 86_400_000;
const dayBefore = (day: string) => utcDay(utcDayStart(day) - DAY_MS);
const newSalt = () => randomBytes(32).toString('base64url');

/** Live salts in the MetaStore, shared by every process; cached per day here. */
export class StoredSalts implements SaltSource {
  /** By the number of the UTC day since 1970: a hit's ISO date text cost more than the rest of the look-up. */
  private readonly cache = new Map<number, Promise<DaySalts>>();
  private lastCleanedDay = '';

  constructor(private readonly meta: SaltStore) {}

  saltsFor(at: Date): Promise<DaySalts> {
    const dayNumber = Math.floor(at.getTime() / DAY_MS);
    let salts = this.cache.get(dayNumber);
    if (!salts) {
      salts = this.load(utcDay(at));
      salts.catch(() => this.cache.delete(dayNumber));
      this.cache.set(dayNumber, salts);
      // Only today and yesterday can be asked for by live hits; drop older cache entries with their salts.
      for (const key of this.cache.keys()) if (key < dayNumber - 1) this.cache.delete(key);
    }
    return salts;
  }

  /** Deletes salts older than yesterday's: by then they are over 48 hours old. */
  async rotate(now: Date): Promise<number> {
    const today = utcDay(now);
    if (today === this.lastCleanedDay) return 0;
    const deleted = await this.meta.deleteSaltsBefore(dayBefore(today));
    this.lastCleanedDay = today;
    return deleted;
  }

  private async load(day: string): Promise<DaySalts> {
    const current = await this.meta.saltForDay(day, newSalt());
    const previous = await this.meta.findSalt(dayBefore(day));
    return { current, previous };
  }
}

/**
 * Salts that live only as long as one import: historical hits must be hashed and sessionised like live ones,
 * but their salts must never be stored (they would outlive the 48-hour rule).
 */
export class EphemeralSalts implements SaltSource {
  private readonly byDay = new Map<string, string>();

  /** `makeSalt` makes each day's salt on first use (random; tests that compare two imports give a fixed one). */
  constructor(private readonly makeSalt: (day: string) => string = newSalt) {}

  async saltsFor(at: Date): Promise<DaySalts> {
    return this.saltsForDay(utcDay(at));
  }

  /** saltsFor without waiting, by UTC day (`YYYY-MM-DD`). */
  saltsForDay(day: string): DaySalts {
    return { current: this.salt(day), previous: this.byDay.get(dayBefore(day)) };
  }

  private salt(day: string): string {
    let salt = this.byDay.get(day);
    if (!salt) this.byDay.set(day, (salt = this.makeSalt(day)));
    return salt;
  }
}
