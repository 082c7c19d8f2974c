// A reference implementation of docs/reports.md's "Journeys" in plain TypeScript, independent of SQL and of
// src/report/: the prepared hits of test/report/oracle.ts (sessions, enrichment, time zones) in, the answer
// `GET /v1/sites/{site_id}/journeys` must give out. Filters, ordering, collapsing and counting are done here,
// the slow and obvious way.

import { localToUtc, passes, type Filter, type OracleHit, type OracleVisit, type Prepared } from './oracle.js';

export interface JourneyQuery {
  /** Local `YYYY-MM-DD HH:MM:SS` in `timezone`, inclusive. */
  from: string;
  /** Local `YYYY-MM-DD HH:MM:SS` in `timezone`, inclusive to the second. */
  to: string;
  timezone: string;
  filters: Filter[];
  entryPage?: string;
  steps: number;
  limit: number;
}

export interface JourneyAnswer {
  date_from: string;
  date_to: string;
  entry_page: string | null;
  steps: number;
  total_visits: string;
  paths: { pages: string[]; visits: string; ended: string }[];
}

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** Every journey of the range: a visit's pageviews in range by time (then pathname), repeats in a row collapsed. */
export function journeyList(data: Prepared, q: Pick<JourneyQuery, 'from' | 'to' | 'timezone' | 'filters'>): string[][] {
  const from = localToUtc(q.from, q.timezone);
  const until = localToUtc(q.to, q.timezone) + 1000;
  const byVisit = new Map<OracleVisit, OracleHit[]>();
  for (const hit of data.hits) {
    if (hit.type !== 'pageview' || hit.at < from || hit.at >= until) continue;
    const list = byVisit.get(hit.visit) ?? [];
    list.push(hit);
    byVisit.set(hit.visit, list);
  }
  const journeys: string[][] = [];
  for (const hits of byVisit.values()) {
    if (!hits.some((h) => passes(h, q.filters))) continue;
    const ordered = [...hits].sort((a, b) => a.at - b.at || byBytes(a.attributes.pathname, b.attributes.pathname));
    const pages: string[] = [];
    for (const h of ordered) if (pages[pages.length - 1] !== h.attributes.pathname) pages.push(h.attributes.pathname);
    journeys.push(pages);
  }
  return journeys;
}

function comparePages(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = byBytes(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

/** The answer for `q`; `date_from`/`date_to` are the query's own ends (the API writes the range it counted). */
export function journeysOf(data: Prepared, q: JourneyQuery): JourneyAnswer {
  const journeys = journeyList(data, q).filter((pages) => q.entryPage === undefined || pages[0] === q.entryPage);
  const paths: JourneyAnswer['paths'] = [];
  for (let depth = 1; depth <= q.steps; depth++) {
    const prefixes = new Map<string, { pages: string[]; visits: number; ended: number }>();
    for (const pages of journeys) {
      if (pages.length < depth) continue;
      const prefix = pages.slice(0, depth);
      const key = JSON.stringify(prefix);
      const entry = prefixes.get(key) ?? { pages: prefix, visits: 0, ended: 0 };
      entry.visits++;
      if (pages.length === depth) entry.ended++;
      prefixes.set(key, entry);
    }
    const top = [...prefixes.values()].sort((a, b) => b.visits - a.visits || comparePages(a.pages, b.pages)).slice(0, q.limit);
    for (const p of top) paths.push({ pages: p.pages, visits: String(p.visits), ended: String(p.ended) });
  }
  return {
    date_from: q.from,
    date_to: q.to,
    entry_page: q.entryPage ?? null,
    steps: q.steps,
    total_visits: String(journeys.length),
    paths,
  };
}
