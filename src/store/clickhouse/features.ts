// What the connected ClickHouse release can do, decided once when the event store opens, from version(): the
// dialect writes the SQL a release needs (or runs best) from these flags, never from the version string itself.

export interface ClickHouseFeatures {
  /** version() as the server reports it, e.g. `18.16.1` or `26.7.2.1`. */
  version: string;
  /** [major, minor] of the release. */
  release: readonly [number, number];
  /**
   * Whether the tables are Distributed over a cluster (CLICKHOUSE_CLUSTER, src/store/clickhouse/cluster.ts): set by
   * the event store, absent for one server. 18.16 needs some SQL written otherwise there (the dialect's joins).
   */
  cluster?: boolean;
}

/** Parses version(); an unreadable one is treated as the oldest release supported (18.16): its SQL runs everywhere. */
export function featuresOf(version: string): ClickHouseFeatures {
  const m = /^(\d+)\.(\d+)/.exec(version);
  const release: [number, number] = m ? [Number(m[1]), Number(m[2])] : [18, 16];
  return { version, release };
}

/** Whether the release is `major.minor` or later. */
export function atLeast(f: ClickHouseFeatures, major: number, minor = 0): boolean {
  return f.release[0] > major || (f.release[0] === major && f.release[1] >= minor);
}

/** The oldest release Plumb supports. */
export const CLICKHOUSE_18_16: ClickHouseFeatures = featuresOf('18.16.1');
