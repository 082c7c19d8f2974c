// Account plans of SPEC.md section 8: the three limits of each tier and what the next tier offers.

export interface Tier {
  tier: number;
  name: string;
  /** USD per month, as SPEC.md writes it ("included" for Tier 1). */
  price: string;
  /** Aggregations and current visitors, per sliding 60 seconds. */
  perMinute: number;
  /** Account, token, sites, events and milestones, per sliding 60 minutes. */
  perHour: number;
  /** Requests of the account in flight at once, all /v1 endpoints. */
  concurrent: number;
}

export const TIERS: readonly Tier[] = [
  { tier: 1, name: 'Tier 1', price: 'included', perMinute: 10, perHour: 500, concurrent: 5 },
  { tier: 2, name: 'Tier 2', price: '19', perMinute: 60, perHour: 1000, concurrent: 5 },
  { tier: 3, name: 'Tier 3', price: '39', perMinute: 120, perHour: 2000, concurrent: 10 },
  { tier: 4, name: 'Tier 4', price: '79', perMinute: 240, perHour: 4000, concurrent: 15 },
  { tier: 5, name: 'Tier 5', price: '199', perMinute: 600, perHour: 8000, concurrent: 20 },
  { tier: 6, name: 'Tier 6', price: '399', perMinute: 1200, perHour: 16000, concurrent: 25 },
];

/** SPEC.md section 8 rule 3: Tier 1's hourly allowance applies from this instant; before it, Tier 1 had none. */
export const TIER1_HOURLY_FROM = Date.UTC(2026, 6, 1);

export function tierOf(tier: number): Tier {
  return TIERS[Math.min(Math.max(Math.trunc(tier), 1), TIERS.length) - 1]!;
}

export function nextTier(tier: number): Tier | null {
  return TIERS[tierOf(tier).tier] ?? null;
}

/** The hourly allowance in force at `now` (Infinity for Tier 1 before 1 July 2026). */
export function hourlyAllowance(tier: number, now: number): number {
  const t = tierOf(tier);
  return t.tier === 1 && now < TIER1_HOURLY_FROM ? Infinity : t.perHour;
}
