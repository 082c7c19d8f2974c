// The names of a compiled report's result columns: written by the plans, read by the engine and by the merge of
// imported days (src/report/imported.ts).

import type { Aggregate } from './fields.js';

/** Fields are f0, f1..., in the order of the query's field grouping. */
export const fieldAlias = (i: number) => `f${i}`;
/** An aggregate is `a_` and its name. */
export const aggregateAlias = (a: Aggregate) => `a_${a}`;
/** The time bucket. Never the name of a table column: a GROUP BY on it must not fall back to hits.ts. */
export const TIMESTAMP_ALIAS = 'bucket_start';
/** The custom property value a dashboard breakdown groups by. */
export const PROP_ALIAS = 'prop_value';
