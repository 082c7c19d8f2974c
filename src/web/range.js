// Report ranges as calendar dates in the site's time zone (today, last 7 days, ..., custom), the comparison
// period of a range, and the chart buckets a range has.

/** Today's date, `YYYY-MM-DD`, in a time zone. */
export function todayIn(timeZone, now = new Date()) {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(now);
  const get = (type) => parts.find((p) => p.type === type)?.value;
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/** The current wall-clock time in a time zone, `YYYY-MM-DD HH:MM:SS`. */
export function nowIn(timeZone, now = new Date()) {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
  }).formatToParts(now);
  const get = (type) => parts.find((p) => p.type === type)?.value;
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}:${get('second')}`;
}

const DAY = 86_400_000;
const utc = (date) => Date.parse(`${date}T00:00:00Z`);
const iso = (ms) => new Date(ms).toISOString().slice(0, 10);
export const addDays = (date, n) => iso(utc(date) + n * DAY);
export const daysBetween = (from, to) => Math.round((utc(to) - utc(from)) / DAY);
const isDate = (text) => typeof text === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(utc(text));

/** The same calendar date `n` years away (29 February becomes 28 February in a common year). */
export function addYears(date, n) {
  const [y, m, d] = date.split('-').map(Number);
  const last = new Date(Date.UTC(y + n, m, 0)).getUTCDate();
  return `${y + n}-${String(m).padStart(2, '0')}-${String(Math.min(d, last)).padStart(2, '0')}`;
}

/** The first day of the month `n` months away from `date`'s month. */
function monthStart(date, n) {
  const [y, m] = date.split('-').map(Number);
  const t = new Date(Date.UTC(y, m - 1 + n, 1));
  return iso(t.getTime());
}

export const RANGES = [
  ['today', 'Today'],
  ['yesterday', 'Yesterday'],
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
  ['month', 'This month'],
  ['last-month', 'Last month'],
  ['12mo', 'Last 12 months'],
  ['custom', 'Custom range'],
];
export const isRange = (name) => RANGES.some(([k]) => k === name);

/** { from, to } calendar dates (inclusive) for a named range. */
export function rangeDates(name, timeZone, custom = {}) {
  const today = todayIn(timeZone);
  switch (name) {
    case 'today':
      return { from: today, to: today };
    case 'yesterday':
      return { from: addDays(today, -1), to: addDays(today, -1) };
    case '30d':
      return { from: addDays(today, -29), to: today };
    case 'month':
      return { from: monthStart(today, 0), to: today };
    case 'last-month':
      return { from: monthStart(today, -1), to: addDays(monthStart(today, 0), -1) };
    case '12mo':
      return { from: monthStart(today, -11), to: today };
    case 'custom': {
      const from = isDate(custom.from) ? custom.from : addDays(today, -6);
      const to = isDate(custom.to) ? custom.to : today;
      return from <= to ? { from, to } : { from: to, to: from };
    }
    default:
      return { from: addDays(today, -6), to: today };
  }
}

/**
 * The period a range is compared with: `previous`, the period just before it: the months before for the month
 * ranges (this month so far against the same days of last month, last month against the month before, the
 * last 12 months against the 12 before), else the same number of days; `year`, the same dates a year earlier;
 * `off`, none. `clock` is the site's wall-clock time now (`YYYY-MM-DD HH:MM:SS`, nowIn): a period that runs to
 * today has only part of today, so its comparison gets only the same part of its last day, `until` that time
 * (today against yesterday up to the same time of day; this month against last month up to the same day and
 * time), unless that last day was cut short to fit a shorter month, which then counts whole.
 */
export function comparisonDates({ from, to }, compare, rangeName = 'custom', clock = undefined) {
  const dates = comparedDays({ from, to }, compare, rangeName);
  if (!dates) return null;
  const partial = clock && clock.slice(0, 10) === to && !dates.cut;
  return partial ? { from: dates.from, to: dates.to, until: clock.slice(11) } : { from: dates.from, to: dates.to };
}

/** The comparison's calendar days, `cut` when its end was moved back to the end of a shorter month. */
function comparedDays({ from, to }, compare, rangeName) {
  const yearBefore = (end) => (addYears(end, -1).slice(5) === end.slice(5) ? {} : { cut: true });
  if (compare === 'year') return { from: addYears(from, -1), to: addYears(to, -1), ...yearBefore(to) };
  if (compare !== 'previous') return null;
  if (rangeName === 'month') {
    const start = monthStart(from, -1);
    const end = addDays(start, daysBetween(from, to));
    const last = addDays(monthStart(from, 0), -1);
    return end > last ? { from: start, to: last, cut: true } : { from: start, to: end };
  }
  if (rangeName === 'last-month') return { from: monthStart(from, -1), to: addDays(from, -1) };
  // The 12 months before, to the same day: on the 5th, the 12 before end on last year's 5th, not at this range's start.
  if (rangeName === '12mo') return { from: monthStart(from, -12), to: addYears(to, -1), ...yearBefore(to) };
  const days = daysBetween(from, to) + 1;
  return { from: addDays(from, -days), to: addDays(from, -1) };
}

/** Granularities the chart offers for a range (the API allows hours over at most 7 days). */
export function intervalsFor({ from, to }) {
  const days = daysBetween(from, to) + 1;
  const out = [];
  if (days <= 7) out.push('hour');
  out.push('day');
  if (days >= 8 && days <= 7 * 60) out.push('week');
  if (days >= 28) out.push('month');
  return out;
}

/** The automatic granularity: hours up to 2 days, days up to ~3 months, then months. */
export function autoInterval({ from, to }) {
  const days = daysBetween(from, to) + 1;
  if (days <= 2) return 'hour';
  if (days <= 93) return 'day';
  return 'month';
}

/** Monday of the week of `date`. */
const weekStart = (date) => addDays(date, -((new Date(utc(date)).getUTCDay() + 6) % 7));

/**
 * Every bucket of the range as { start, from, to }: `start` the bucket's first moment as the API writes it
 * (`YYYY-MM-DD HH:MM:SS`, site time), `from`/`to` its first and last calendar day inside the range (weeks and
 * months at the edges are cut to the range).
 */
export function buckets({ from, to }, interval) {
  const out = [];
  if (interval === 'hour') {
    for (let d = from; d <= to; d = addDays(d, 1)) {
      for (let h = 0; h < 24; h++) out.push({ start: `${d} ${String(h).padStart(2, '0')}:00:00`, from: d, to: d });
    }
  } else if (interval === 'day') {
    for (let d = from; d <= to; d = addDays(d, 1)) out.push({ start: `${d} 00:00:00`, from: d, to: d });
  } else if (interval === 'week') {
    for (let w = weekStart(from); w <= to; w = addDays(w, 7)) {
      const start = w < from ? from : w;
      const end = addDays(w, 6) > to ? to : addDays(w, 6);
      out.push({ start: `${start} 00:00:00`, from: start, to: end });
    }
  } else {
    for (let m = monthStart(from, 0); m <= to; m = monthStart(m, 1)) {
      const end = addDays(monthStart(m, 1), -1);
      out.push({ start: `${m} 00:00:00`, from: m < from ? from : m, to: end > to ? to : end });
    }
  }
  return out;
}

/** A site-time timestamp as seconds, read as if it were UTC: the chart then labels site wall-clock times. */
export const wallSeconds = (timestamp) => Date.parse(`${timestamp.replace(' ', 'T')}Z`) / 1000;
