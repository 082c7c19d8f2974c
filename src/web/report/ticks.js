// Where the chart's time axis labels months and weeks: at the buckets' own starts, every n-th as room allows. A month
// is no fixed number of seconds, so ticks spaced evenly (28 days) drifted off the month starts and could name one
// month twice ("Dec 2025, Dec 2025, Jan 2026").

/** Room one label takes on the axis, in CSS pixels ("Sep 2026" at 12 px, and a gap). */
export const LABEL_ROOM_PX = 72;

/**
 * The bucket starts of `starts` to label on an axis `widthPx` wide: the first and every n-th after it, n as small as
 * lets the labels fit.
 * @param {readonly number[]} starts
 * @param {number} widthPx
 * @returns {number[]}
 */
export function bucketTicks(starts, widthPx) {
  const fit = Math.max(1, Math.floor(widthPx / LABEL_ROOM_PX));
  const step = Math.max(1, Math.ceil(starts.length / fit));
  return starts.filter((_, i) => i % step === 0);
}
