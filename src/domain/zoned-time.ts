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

/** The zone's offset from UTC at instant `utcMs`, in milliseconds (local = UTC + offset). */
export function zoneOffsetMs(zone: string, utcMs: number): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(utcMs))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const local = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
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

/**
 * The zone's offsets over [fromMs, untilMs): a list of spans, each starting where the offset changes. Reports use
 * it to turn UTC times into local ones with plain arithmetic in SQL, the same in every SQL dialect.
 */
export function offsetSpans(zone: string, fromMs: number, untilMs: number): OffsetSpan[] {
  const key = `${zone} ${fromMs} ${untilMs}`;
  const cached = spanCache.get(key);
  if (cached) return cached;
  const spans = computeSpans(zone, fromMs, untilMs);
  if (spanCache.size > 1000) spanCache.clear();
  spanCache.set(key, spans);
  return spans;
}

const spanCache = new Map<string, OffsetSpan[]>();

function computeSpans(zone: string, fromMs: number, untilMs: number): OffsetSpan[] {
  const spans: OffsetSpan[] = [{ from: fromMs, offsetMs: zoneOffsetMs(zone, fromMs) }];
  // Offsets change at most a few times a year, never twice within a day: step a day, then bisect to the second.
  const STEP = DAY;
  let t = fromMs;
  while (t < untilMs) {
    const next = Math.min(t + STEP, untilMs);
    const current = spans[spans.length - 1]!.offsetMs;
    const o = zoneOffsetMs(zone, next);
    if (o !== current) {
      let lo = t;
      let hi = next;
      while (hi - lo > 1000) {
        const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
        if (zoneOffsetMs(zone, mid) === current) lo = mid;
        else hi = mid;
      }
      spans.push({ from: hi, offsetMs: o });
    }
    t = next;
  }
  return spans;
}
