// Number formats of the dashboard, in the viewer's locale: counts, durations, rates, changes, money in a goal's currency.

const locale = typeof navigator === 'object' && navigator.language ? navigator.language : 'en-US';
const integer = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat(locale, { minimumFractionDigits: 0, maximumFractionDigits: 2 });

export const fmtInt = (value) => integer.format(Number(value) || 0);
export const fmtDecimal = (value) => decimal.format(Number(value) || 0);

export function fmtDuration(seconds) {
  const s = Math.round(Number(seconds) || 0);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

// Every percentage of the page (rates, relative changes, percentage points) has exactly one decimal, so "1.0%"
// stands beside "4.4%" rather than "1%": numbers that look alike are read alike.
const tenth = new Intl.NumberFormat(locale, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
/** A number of percent (or points) rounded half away from zero to one decimal, as shown. */
export const roundTenth = (percent) => Math.sign(percent) * Math.round(Math.abs(Number(percent) || 0) * 10) / 10;

/** A rate (0.4231) as a percentage with one decimal (42.3%; 0.01 is 1.0%). */
export const fmtPercent = (rate) => `${tenth.format(roundTenth((Number(rate) || 0) * 100))}%`;

/** A size of change, never signed (the arrow gives the direction): 12.5 -> "12.5%", as points "12.5 pp". */
export const fmtChange = (percent, points = false) => `${tenth.format(Math.abs(roundTenth(percent)))}${points ? ' pp' : '%'}`;

/**
 * The ISO code of each SPEC.md currency (`peso`: Mexican peso, `franc`: Swiss franc, `rupee`: Indian rupee,
 * `yuan`: renminbi). `integer` is a plain number and `none` has no value at all.
 */
export const CURRENCY_CODES = new Map([
  ['dollar', 'USD'],
  ['pound', 'GBP'],
  ['euro', 'EUR'],
  ['yuan', 'CNY'],
  ['peso', 'MXN'],
  ['shekel', 'ILS'],
  ['yen', 'JPY'],
  ['won', 'KRW'],
  ['hryvnia', 'UAH'],
  ['franc', 'CHF'],
  ['rupee', 'INR'],
]);

const money = new Map();
/**
 * An event value (the API sums them in hundredths, "cents", whatever the currency) in the goal's currency:
 * 12345 dollar -> "$123.45", 12345 yen -> "¥123.45", 12345 integer -> "123.45", none -> "—".
 */
export function fmtValue(cents, currency) {
  const amount = (Number(cents) || 0) / 100;
  if (currency === 'none') return '—';
  const code = CURRENCY_CODES.get(currency);
  if (!code) return decimal.format(amount);
  if (!money.has(code)) {
    money.set(code, new Intl.NumberFormat(locale, { style: 'currency', currency: code, minimumFractionDigits: 0, maximumFractionDigits: 2 }));
  }
  return money.get(code).format(amount);
}
