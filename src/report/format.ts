// How reports write aggregates (SPEC.md): decimal strings from the integers queries compute.

import { DECIMAL_PLACES, ENGAGEMENT_AGGREGATES, type Aggregate } from './fields.js';

/**
 * A number as SPEC.md writes aggregates: a decimal string, integers without a point, no trailing zeros.
 * Decimal aggregates arrive as integers scaled by 10^places (already rounded), so this is exact text work.
 * An engagement aggregate of a group without engagement is null: no page reported any, which 0 would misstate.
 */
export function formatAggregate(aggregate: Aggregate, raw: unknown): string | null {
  if ((raw === null || raw === undefined) && ENGAGEMENT_AGGREGATES.has(aggregate)) return null;
  const digits = raw === null || raw === undefined ? '0' : BigInt(typeof raw === 'number' ? Math.round(raw) : (raw as bigint | string)).toString();
  const places = DECIMAL_PLACES[aggregate];
  if (places === undefined || digits === '0') return digits;
  const padded = digits.padStart(places + 1, '0');
  const whole = padded.slice(0, -places);
  const fraction = padded.slice(-places).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}
