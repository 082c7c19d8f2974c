// temp: prints the ClickHouse SQL of the bench reports (not part of the project; deleted after use)
import { ReportEngine } from './src/report/engine.js';
import { ReportCompiler } from './src/report/compiler.js';
import { ClickHouseDialect } from './src/report/clickhouse-dialect.js';
import { parseReportRequest } from './src/report/parse.js';
import { writeFileSync } from 'node:fs';
const [site, endIso, outDir] = process.argv.slice(2);
const end = new Date(endIso!);
const DAY = 86_400_000;
const local = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');
const from = local(new Date(end.getTime() - 30 * DAY));
const to = local(new Date(end.getTime() - 1000));
const week = local(new Date(end.getTime() - 7 * DAY));
const range = `date_from=${encodeURIComponent(from)}&date_to=${encodeURIComponent(to)}`;
const base = `entity=pageview&entity_id=${site}`;
const f = (filters: unknown) => `filters=${encodeURIComponent(JSON.stringify(filters))}`;
const cases = [
  { name: 'totals', query: `${base}&aggregates=visits,pageviews,avg_duration,bounce_rate&${range}` },
  { name: 'uniques', query: `${base}&aggregates=visits,uniques,pageviews,avg_duration,bounce_rate&${range}` },
  { name: 'pvday', query: `${base}&aggregates=pageviews&date_grouping=day&${range}` },
  { name: 'byday', query: `${base}&aggregates=visits,pageviews&date_grouping=day&${range}` },
  { name: 'toppages', query: `${base}&aggregates=visits,pageviews&field_grouping=pathname&limit=10&${range}` },
  { name: 'referrers', query: `${base}&aggregates=visits&field_grouping=referrer_source&${f([{ property: 'country_code', operator: 'is', value: 'US' }])}&${range}` },
  { name: 'regex', query: `${base}&aggregates=pageviews,visits&${f([{ property: 'pathname', operator: 'matching', value: '^/blog/post-1[0-9]$' }])}&${range}` },
  { name: 'entry', query: `${base}&aggregates=visits,bounce_rate&field_grouping=entry_page&limit=10&${range}` },
  { name: 'hourly', query: `${base}&aggregates=visits,pageviews&date_grouping=hour&date_from=${encodeURIComponent(week)}&date_to=${encodeURIComponent(to)}` },
];
const store = { query: async () => [{ ok: 1 }] } as never;
const engine = new ReportEngine(store, new ReportCompiler(new ClickHouseDialect()), { run: (f: () => unknown) => f() } as never);
for (const c of cases) {
  const { compiled } = await engine.compile(parseReportRequest(Object.fromEntries(new URLSearchParams(c.query))), { id: site, timezone: 'UTC' } as never);
  writeFileSync(`${outDir}/${c.name}.sql`, compiled.sql + '\n');
}
