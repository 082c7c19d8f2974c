// Report ranges (today, 7 days, 30 days, this month, custom) as calendar dates in the site's time zone, and the
// buckets a chart over them has.

/** Today's date, `YYYY-MM-DD`, in a time zone. */
export function todayIn(timeZone, now = new Date()) {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(now);
  const get = (type) => parts.find((p) => p.type === type)?.value;
  return `${get('year')}-${get('month')}-${get('day')}`;
}

const DAY = 86_400_000;
const utc = (date) => Date.parse(`${date}T00:00:00Z`);
const iso = (ms) => new Date(ms).toISOString().slice(0, 10);
export const addDays = (date, n) => iso(utc(date) + n * DAY);
export const daysBetween = (from, to) => Math.round((utc(to) - utc(from)) / DAY);

export const RANGES = [
  ['today', 'Today'],
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
  ['month', 'This month'],
  ['custom', 'Custom range'],
];

/** { from, to } calendar dates (inclusive) for a named range. */
export function rangeDates(name, timeZone, custom = {}) {
  const today = todayIn(timeZone);
  switch (name) {
    case 'today':
      return { from: today, to: today };
    case '30d':
      return { from: addDays(today, -29), to: today };
    case 'month':
      return { from: `${today.slice(0, 8)}01`, to: today };
    case 'custom': {
      const from = custom.from || addDays(today, -6);
      const to = custom.to || today;
      return from <= to ? { from, to } : { from: to, to: from };
    }
    default:
      return { from: addDays(today, -6), to: today };
  }
}

/** Hourly buckets up to two days (the API allows hours over at most 7), daily up to ~13 months, then monthly. */
export function groupingFor({ from, to }) {
  const days = daysBetween(from, to) + 1;
  if (days <= 2) return 'hour';
  if (days <= 400) return 'day';
  return 'month';
}

/** Every bucket start (`YYYY-MM-DD HH:MM:SS`, site time) of the range, so empty ones chart as zero. */
export function buckets({ from, to }, grouping) {
  const out = [];
  if (grouping === 'hour') {
    for (let d = from; d <= to; d = addDays(d, 1)) for (let h = 0; h < 24; h++) out.push(`${d} ${String(h).padStart(2, '0')}:00:00`);
  } else if (grouping === 'day') {
    for (let d = from; d <= to; d = addDays(d, 1)) out.push(`${d} 00:00:00`);
  } else {
    let [y, m] = from.split('-').map(Number);
    const [ty, tm] = to.split('-').map(Number);
    while (y < ty || (y === ty && m <= tm)) {
      out.push(`${y}-${String(m).padStart(2, '0')}-01 00:00:00`);
      m++;
      if (m > 12) {
        m = 1;
        y++;
      }
    }
  }
  return out;
}

/** A site-time timestamp as seconds, read as if it were UTC: the chart then labels site wall-clock times. */
export const wallSeconds = (timestamp) => Date.parse(`${timestamp.replace(' ', 'T')}Z`) / 1000;
