// The range and filters of a report that is not /v1/aggregations (journeys, a funnel's report, the report page's
// own routes), read exactly as /v1/aggregations reads them, and the range written back as local times.

import { formatTimestamp } from '../../domain/time.js';
import { zoneOffsetMs } from '../../domain/zoned-time.js';

/** The parameters /v1/aggregations reads for a range and filters, handed to its parser unchanged. */
const RANGE_PARAMETERS = ['date_from', 'date_to', 'timezone', 'filters'];

/**
 * `base` (the report's entity and aggregates, fixed by the route) with `query`'s range and filters, in either form
 * (`filters` as JSON, or `filters[0][property]=...`), and the `extra` parameters the caller parses along with them.
 */
export function rangeQuery(query: Record<string, unknown>, base: Record<string, unknown>, extra: readonly string[] = []): Record<string, unknown> {
  const forwarded: Record<string, unknown> = { ...base };
  for (const key of Object.keys(query)) {
    if (RANGE_PARAMETERS.includes(key) || extra.includes(key) || key.startsWith('filters')) forwarded[key] = query[key];
  }
  return forwarded;
}

/** The filters[][…] parameters of a raw request URL in their order, which the parsed query object does not keep. */
export function orderedFilters(rawUrl: string | undefined): [string, string][] {
  const url = rawUrl ?? '';
  const at = url.indexOf('?');
  return [...new URLSearchParams(at < 0 ? '' : url.slice(at + 1))].filter(([k]) => k.startsWith('filters'));
}

/** A UTC instant as local `YYYY-MM-DD HH:MM:SS` in `zone`. */
export const localText = (at: number, zone: string) => formatTimestamp(new Date(at + zoneOffsetMs(zone, at)));
