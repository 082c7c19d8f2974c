// Local wall-clock time in an IANA time zone and UTC instants, converted both ways with the platform's ICU data.

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

// `MM/DD/YYYY, HH:MM:SS` from the formatter above: parsing it is several times faster than formatToParts.
const FORMATTED_RE = /^(\d{2})\/(\d{2})\/(\d+),? (\d{2}):(\d{2}):(\d{2})$/;

/** The zone's offset from UTC at instant `utcMs`, in milliseconds (local = UTC + offset). */
export function zoneOffsetMs(zone: string, utcMs: number): number {
  const f = formatter(zone);
  const date = new Date(utcMs);
  let local: number;
  const m = FORMATTED_RE.exec(f.format(date));
  if (m) {
    local = Date.UTC(Number(m[3]), Number(m[1]) - 1, Number(m[2]), Number(m[4]), Number(m[5]), Number(m[6]));
  } else {
    const parts: Record<string, number> = {};
    for (const p of f.formatToParts(date)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
    local = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  }
  return local - (utcMs - (((utcMs % 1000) + 1000) % 1000));
}

const DAY = 86_400_000;

/**
 * The UTC instant of a local wall-clock time given as the UTC fields of `localAsUtcMs`. A time that exists twice
 * (DST overlap) or not at all (DST gap) takes the offset in effect just before the transition.
 */
export function localToUtc(zone: string, localAsUtcMs: number): number {
  const before = zoneOffsetMs(zone, localAsUtcMs - DAY);
  const after = zoneOffsetMs(zone, localAsUtcMs + DAY);
  const valid = [before, after].filter((o) => zoneOffsetMs(zone, localAsUtcMs - o) === o);
  if (valid.length === 0) return localAsUtcMs - before; // in a gap
  return Math.min(...valid.map((o) => localAsUtcMs - o)); // the earlier instant of an overlap
}

export interface OffsetSpan {
  /** First instant (UTC ms) of the span; the first span starts at the range's start. */
  from: number;
  offsetMs: number;
}

interface Transition {
  /** First instant (UTC ms, whole seconds) of the new offset. */
  at: number;
  offsetMs: number;
}

/**
 * The zone's transitions per UTC year, found once and kept: a span list then costs one lookup per year of the
 * range plus its transitions. Bounded (every zone over the accepted report years fits several times over).
 */
const yearCache = new Map<string, readonly Transition[]>();
const YEAR_CACHE_LIMIT = 200_000;

const yearKey = (zone: string, year: number) => `${zone}\n${year}`;
const startOfUtcYear = (year: number) => new Date(0).setUTCFullYear(year, 0, 1);

/**
 * The transitions of `zone` in (start of UTC `year`, start of the next], walking a day at a time and bisecting
 * each change to the second: offsets change at most a few times a year, never twice within a day (the closest
 * pair in the TZ database since 2000 is a week apart: America/Boa_Vista, October 2000). About 370 probes.
 */
function computeYear(zone: string, year: number): readonly Transition[] {
  const out: Transition[] = [];
  const end = startOfUtcYear(year + 1);
  let t = startOfUtcYear(year);
  let current = zoneOffsetMs(zone, t);
  while (t < end) {
    const next = Math.min(t + DAY, end);
    const o = zoneOffsetMs(zone, next);
    if (o !== current) {
      let lo = t;
      let hi = next;
      while (hi - lo > 1000) {
        const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
        if (zoneOffsetMs(zone, mid) === current) lo = mid;
        else hi = mid;
      }
      out.push({ at: hi, offsetMs: zoneOffsetMs(zone, hi) });
      current = o;
    }
    t = next;
  }
  return out;
}

function yearTransitions(zone: string, year: number): readonly Transition[] {
  const key = yearKey(zone, year);
  let found = yearCache.get(key);
  if (!found) {
    found = computeYear(zone, year);
    if (yearCache.size >= YEAR_CACHE_LIMIT) {
      // Forget the oldest tenth (a Map iterates in insertion order).
      let n = YEAR_CACHE_LIMIT / 10;
      for (const k of yearCache.keys()) {
        if (n-- <= 0) break;
        yearCache.delete(k);
      }
    }
    yearCache.set(key, found);
  }
  return found;
}

/** The UTC years whose transitions can fall in [fromMs, untilMs). */
function yearsOf(fromMs: number, untilMs: number): number[] {
  const first = new Date(fromMs).getUTCFullYear();
  const last = new Date(Math.max(fromMs, untilMs)).getUTCFullYear();
  const years: number[] = [];
  // A transition at the very start of year `first` is kept with the year before, and is not after fromMs.
  for (let y = first; y <= last; y++) years.push(y);
  return years;
}

/**
 * Computes and keeps the transitions that `offsetSpans` needs for this range, one year per turn of the event
 * loop, so a long range never holds up other requests (reports call it before compiling).
 */
export async function prepareOffsetSpans(zone: string, fromMs: number, untilMs: number): Promise<void> {
  for (const year of yearsOf(fromMs, untilMs)) {
    if (yearCache.has(yearKey(zone, year))) continue;
    yearTransitions(zone, year);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * The zone's offsets over [fromMs, untilMs): a list of spans, each starting where the offset changes. Reports use
 * it to turn UTC times into local ones with plain arithmetic in SQL, the same in every SQL dialect. Costs one
 * lookup per UTC year of the range plus its transitions once `prepareOffsetSpans` (or an earlier call) has seen
 * those years.
 */
export function offsetSpans(zone: string, fromMs: number, untilMs: number): OffsetSpan[] {
  const spans: OffsetSpan[] = [{ from: fromMs, offsetMs: zoneOffsetMs(zone, fromMs) }];
  for (const year of yearsOf(fromMs, untilMs)) {
    for (const tr of yearTransitions(zone, year)) {
      if (tr.at > fromMs && tr.at < untilMs && tr.offsetMs !== spans[spans.length - 1]!.offsetMs) {
        spans.push({ from: tr.at, offsetMs: tr.offsetMs });
      }
    }
  }
  return spans;
}
